/* Arm semihosting (HLT #0xF000 on AArch64): console output and exit status under QEMU -semihosting. */
#ifndef SEMIHOSTING_H
#define SEMIHOSTING_H
#include <stdint.h>

static inline uintptr_t semihosting_call(uintptr_t op, uintptr_t arg) {
    register uintptr_t x0 __asm__("x0") = op;
    register uintptr_t x1 __asm__("x1") = arg;
    __asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
    return x0;
}

static inline void sh_puts(const char* s) { semihosting_call(0x04 /* SYS_WRITE0 */, (uintptr_t)s); }

static inline void sh_putu(unsigned long v) {
    char buf[24];
    int i = 23;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && i > 0);
    sh_puts(&buf[i]);
}

static inline void sh_puthex(unsigned long v) {
    char buf[19];
    buf[0] = '0';
    buf[1] = 'x';
    for (int i = 0; i < 16; i++) buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
    buf[18] = 0;
    sh_puts(buf);
}

#endif
