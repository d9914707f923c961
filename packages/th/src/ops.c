/* The op vocabulary as data: th_ops.def's rows for th_op_get(), and the
 * names the element-wise and reduction files print in their messages. */
#include "elementwise.h"

#define CLS(c) (TH_IF_F_##c(TH_OPC_FLOAT |) TH_IF_I_##c(TH_OPC_INT |) \
                TH_IF_B_##c(TH_OPC_BOOL |) 0)
/* the expressions, as written in the row (stringified before expansion) */
#define EXPRS(c, fs, is, bs)                            \
    {(0 TH_IF_F_##c(+1)) ? fs : NULL, (0 TH_IF_I_##c(+1)) ? is : NULL, \
     (0 TH_IF_B_##c(+1)) ? bs : NULL}

static const th_op_info unary_rows[] = {
#define TH_UNARY_OP(CODE, name, c, kind, flags, f, i, b) \
    {#name, TH_OP_UNARY, TH_##CODE, CLS(c), TH_KIND_##kind | (flags), EXPRS(c, #f, #i, #b)},
#include "th_ops.def"
};
static const th_op_info binary_rows[] = {
#define TH_BINARY_OP(CODE, name, c, kind, flags, f, i, b) \
    {#name, TH_OP_BINARY, TH_##CODE, CLS(c), TH_KIND_##kind | (flags), EXPRS(c, #f, #i, #b)},
#include "th_ops.def"
};
static const th_op_info reduce_rows[] = {
#define TH_REDUCE_OP(CODE, name, c, flags, identity, combine) \
    {#name, TH_OP_REDUCE, TH_##CODE, CLS(c), (flags), {#combine, #identity, NULL}},
#include "th_ops.def"
};

static const th_op_info *family_rows(int family, int *n) {
    switch (family) {
    case TH_OP_UNARY: *n = TH_NUM_UNARY_OPS; return unary_rows;
    case TH_OP_BINARY: *n = TH_NUM_BINARY_OPS; return binary_rows;
    case TH_OP_REDUCE: *n = TH_NUM_REDUCE_OPS; return reduce_rows;
    default: *n = 0; return NULL;
    }
}

int th_op_count(int family) {
    int n;
    if (!family_rows(family, &n)) {
        th__error(TH_ERR_VALUE, "invalid op family %d", family);
        return -1;
    }
    return n;
}

const th_op_info *th_op_get(int family, int code) {
    int n;
    const th_op_info *rows = family_rows(family, &n);
    if (!rows)
        return th__error_null(TH_ERR_VALUE, "invalid op family %d", family);
    if (code < 0 || code >= n)
        return th__error_null(TH_ERR_VALUE, "invalid op code %d", code);
    return &rows[code];
}

const char *th__op_name(int family, int code) {
    int n;
    const th_op_info *rows = family_rows(family, &n);
    return rows && code >= 0 && code < n ? rows[code].name : "?";
}

int th__op_flags(int family, int code) {
    int n;
    const th_op_info *rows = family_rows(family, &n);
    return rows && code >= 0 && code < n ? rows[code].flags : 0;
}
