/* libTHC's C test programs use the harness installed with libTH. */
#ifndef THC_TESTS_CHECK_H
#define THC_TESTS_CHECK_H
#include "thc.h"
#define CHECK_LIB thc
#include "th_check.h"
#endif
