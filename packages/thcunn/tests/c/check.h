/* libTHCUNN's C test programs use the harness installed with libTH. */
#ifndef THCUNN_TESTS_CHECK_H
#define THCUNN_TESTS_CHECK_H
#include "thcunn.h"
#define CHECK_LIB thcunn
#include "th_check.h"
#endif
