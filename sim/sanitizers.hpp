#pragma once
// LIC_ASAN is 1 when AddressSanitizer instruments this translation unit (g++ or clang++), so the
// few places that manage stacks and mappings by hand can tell ASan about them.

#if defined(__SANITIZE_ADDRESS__)
#define LIC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIC_ASAN 1
#endif
#endif

#if LIC_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
