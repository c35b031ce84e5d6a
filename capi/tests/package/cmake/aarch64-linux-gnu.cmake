# Toolchain file of the package consumer test: Debian's aarch64 cross gcc, whose sysroot is
# /usr/aarch64-linux-gnu. Like the toolchain files of Yocto and the Android NDK it confines
# find_package to the find root paths (MODE_PACKAGE ONLY), so the test also proves the recipe
# docs/c-api.md gives for those: the qgemm prefix goes into CMAKE_FIND_ROOT_PATH as well as
# CMAKE_PREFIX_PATH (run.sh passes both).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
list(APPEND CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
