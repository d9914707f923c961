/* libTHNN's C test programs use the harness installed with libTH. */
#ifndef THNN_TESTS_CHECK_H
#define THNN_TESTS_CHECK_H
#include "thnn.h"
#define CHECK_LIB thnn
#include "th_check.h"
#endif
