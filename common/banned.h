/* SPDX-License-Identifier: MIT */
/*
 * Functions that invite overflows or hidden allocation failures.  Every .c file of
 * the project includes it after all other headers (as git's banned.h); use the safe
 * forms: snprintf, orr_xmalloc & co, memcpy with a checked length.
 */
#ifndef ORRERY_BANNED_H
#define ORRERY_BANNED_H

#define ORR_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) ORR_BANNED(strcpy)
#undef strcat
#define strcat(x, y) ORR_BANNED(strcat)
#undef sprintf
#define sprintf(...) ORR_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) ORR_BANNED(vsprintf)
#undef gets
#define gets(x) ORR_BANNED(gets)
#undef strtok
#define strtok(x, y) ORR_BANNED(strtok)

#endif
