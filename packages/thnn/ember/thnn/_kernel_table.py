"""libTHNN's kernel table (include/thnn_kernels.def) written out into a
header: the kernels of libTHNN and libTHCUNN are declared once, in that
table, with NN_FN(name), NN_NAME(NAME), NN_TENSOR and NN_GENERATOR for what
differs; each header defines those four macros and includes the table.
The installed headers, and what cffi reads, are the written-out text.
Loaded by path by ember-thnn's build (ember.thnn is not built yet) and
imported by ember-thcunn's."""
import re

TABLE = "thnn_kernels.def"
_MACROS = ("NN_FN", "NN_NAME", "NN_TENSOR", "NN_GENERATOR")


def expand_header(header: str, table: str) -> str:
    """`header` with its table block (the NN_* #defines, the #include of
    the table, the #undefs) replaced by the table's declarations in the
    header's names."""
    fn = re.search(r"#define NN_FN\(name\) (\w+)##name", header).group(1)
    const = re.search(r"#define NN_NAME\(name\) (\w+)##name", header).group(1)
    tensor = re.search(r"#define NN_TENSOR (\w+)", header).group(1)
    generator = re.search(r"#define NN_GENERATOR (\w+)", header).group(1)
    text = re.sub(r"NN_FN\((\w+)\)", lambda m: fn + m.group(1), table)
    text = re.sub(r"NN_NAME\((\w+)\)", lambda m: const + m.group(1), text)
    text = re.sub(r"\bNN_TENSOR\b", tensor, text)
    text = re.sub(r"\bNN_GENERATOR\b", generator, text)
    text = text.split("*/", 1)[1].strip("\n")  # the table's own opening comment
    out = []
    for line in header.splitlines():
        if re.match(rf"#(define|undef) ({'|'.join(_MACROS)})\b", line):
            continue
        out.append(text if line.strip() == f'#include "{TABLE}"' else line)
    return "\n".join(out) + "\n"
