/* banned.h: libc calls that are easy to misuse; force-included into every C file of ours
 * (see cmake/LpWarnings.cmake). Use lp_buf, snprintf, strtol/strtod and strtok_r instead. */
#ifndef LP_BANNED_H
#define LP_BANNED_H
/* The system headers that declare (and in glibc, inline) these functions come first, so that
 * the macros below only catch our own uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LP_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) LP_BANNED(strcpy)
#undef strcat
#define strcat(x, y) LP_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) LP_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) LP_BANNED(strncat)
#undef sprintf
#define sprintf(...) LP_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) LP_BANNED(vsprintf)
#undef gets
#define gets(x) LP_BANNED(gets)
#undef strtok
#define strtok(x, y) LP_BANNED(strtok)
#undef atoi
#define atoi(x) LP_BANNED(atoi)
#undef atol
#define atol(x) LP_BANNED(atol)
#undef atof
#define atof(x) LP_BANNED(atof)
#endif
