/* <qgemm/qgemm.h>: the prefixed include form of qgemm.h; not generated (docs/c-api.md,
 * "Installing"). The package has one include directory, <prefix>/include/qgemm (qgemm.pc's Cflags,
 * the CMake targets' include directory), so that a program written for KleidiAI keeps its
 * `#include "kai/..."` lines. This file sits at <prefix>/include/qgemm/qgemm/qgemm.h, so that
 * `#include <qgemm/qgemm.h>` works from those same flags too, without <prefix>/include itself on
 * the include path (where another kai/ tree, a real KleidiAI's, may be installed). It includes
 * the header next to its directory, whose include guard makes both forms one declaration. */
#include "../qgemm.h"
