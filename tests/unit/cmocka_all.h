/* cmocka needs these before it; one include for every unit test. */
#ifndef CBB_TEST_CMOCKA_ALL_H
#define CBB_TEST_CMOCKA_ALL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#endif
