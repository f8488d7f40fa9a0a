/*
 * AddressSanitizer hooks of the POSIX port's heaps (heap.c, region.c): POSIX_ASAN is defined
 * when the build has AddressSanitizer (gcc: __SANITIZE_ADDRESS__, clang: __has_feature);
 * POSIX_POISON / POSIX_UNPOISON mark memory unaddressable / addressable, and do nothing
 * without it.
 */
#ifndef AGENT_POSIX_ASAN_H
#define AGENT_POSIX_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define POSIX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POSIX_ASAN 1
#endif
#endif

#ifdef POSIX_ASAN
#include <sanitizer/asan_interface.h>
#define POSIX_POISON(addr, size)   ASAN_POISON_MEMORY_REGION((addr), (size))
#define POSIX_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION((addr), (size))
#else
#define POSIX_POISON(addr, size)   ((void)(addr), (void)(size))
#define POSIX_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

#endif /* AGENT_POSIX_ASAN_H */
