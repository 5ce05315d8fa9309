"""What an ahead-of-time library exports: a valid, clash-free entry-point name, helpers
prefixed with it (two libraries in one program keep their own messages), and the size
bounds the header states are the ones the library checks."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_aot import CC

import myc
from myc.lower.hostplan import MAX_BYTES

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler ('cc')")


def twice(x):
    return x * 2.0


def plus_one(x):
    return x + 1.0


@pytest.mark.parametrize("name, why", [
    ("my-fn", "not a C identifier"), ("1abc", "not a C identifier"), ("", "not a C identifier"),
    ("a b", "not a C identifier"), ("int", "keyword"), ("while", "keyword"),
    ("class", "keyword"), ("_Bool", "keyword"), ("malloc", "C or math library"),
    ("free", "C or math library"), ("exp", "C or math library"),
    ("printf", "C or math library"), ("pthread_create", "C or math library"),
    ("main", "C standard headers"), ("size_t", "C standard headers"),
    ("__x", "reserved"), ("_Foo", "reserved"), ("myc_array", "header"),
    ("MYC_OK", "header"), ("pkey", "would export 'pkey_free'"),
])
def test_invalid_names_are_refused(tmp_path, name, why):
    with pytest.raises(myc.MycError, match=re.escape(why) if "'" in why else why):
        myc.aot(twice, "f32[4]", str(tmp_path / "libx.so"), name)
    assert not (tmp_path / "libx.so").exists()


def test_name_must_be_a_string(tmp_path):
    with pytest.raises(myc.MycError, match="must be a string"):
        myc.aot(twice, "f32[4]", str(tmp_path / "libx.so"), 3)


def test_cli_name_is_validated(tmp_path, capsys):
    from myc.cli import main

    src = tmp_path / "mod.py"
    src.write_text("def f(x):\n    return x * 2.0\n")
    out = tmp_path / "libcli.so"
    for bad in ("my-fn", "exp", "int"):
        assert main(["aot", f"{src}:f", "--sig", "f32[4]", "-o", str(out), "--name", bad]) == 1
        assert f"'{bad}'" in capsys.readouterr().err
    assert main(["aot", f"{src}:f", "--sig", "f32[4]", "-o", str(out), "--name", "f2"]) == 0


def test_function_name_that_clashes_is_refused(tmp_path, capsys):
    """No --name: the function's own name is checked as well."""
    from myc.cli import main

    src = tmp_path / "clash.py"
    src.write_text("import numpy as np\n\n\ndef exp(x):\n    return np.exp(x) + 1.0\n")
    out = tmp_path / "libexp.so"
    assert main(["aot", f"{src}:exp", "--sig", "f32[4]", "-o", str(out)]) == 1
    assert "'exp' is a function or variable of the C or math library" in \
        capsys.readouterr().err
    assert not out.exists()
    assert main(["aot", f"{src}:exp", "--sig", "f32[4]", "-o", str(out),
                 "--name", "exp_plus_one"]) == 0


@pytest.mark.parametrize("sig", [
    "f32[99999999999999999999999]", "f32[1099511627776,1099511627776]",
    "f64[N,72057594037927936]", "f32[0,99999999999999999999]",
])
def test_huge_static_sizes_are_a_myc_error(tmp_path, sig):
    with pytest.raises(myc.MycError, match="too large.*at most 2\\^56 bytes"):
        myc.aot(twice, sig, str(tmp_path / "libh.so"))


def test_huge_sizes_in_a_tuple_signature_are_a_myc_error(tmp_path):
    with pytest.raises(myc.MycError, match="too large"):
        myc.aot(twice, [((1 << 60,), np.float32)], str(tmp_path / "libh.so"))
    with pytest.raises(myc.MycError, match="negative size"):
        myc.aot(twice, [((-3,), np.float32)], str(tmp_path / "libh.so"))


def test_a_big_static_array_compiles_without_allocating_it(tmp_path):
    """4 TiB is within the limit: specialized on a broadcast zero, never allocated."""
    so, h = myc.aot(twice, "f32[1099511627776]", str(tmp_path / "libbig.so"))
    assert "f32[1099511627776]" in Path(h).read_text()


TWO_LIBS = r"""
#include <stdio.h>
#include <string.h>
#include "liba.h"
#include "libb.h"

int main(void) {
    float x[4] = {1, 2, 3, 4};
    int64_t s4[] = {4}, s3[] = {3};
    myc_array a_in = {x, 1, s4, NULL, MYC_F32}, b_in = {x, 1, s3, NULL, MYC_F64};
    myc_array out[1];
    int sa = double_it(&a_in, 1, out, 7);          /* a: wrong n_outputs */
    int sb = add_one(&b_in, 1, out, 1);            /* b: wrong dtype */
    printf("a %d %s\n", sa, double_it_last_error());
    printf("b %d %s\n", sb, add_one_last_error());
    sa = double_it(&a_in, 1, out, 1);              /* a succeeds: only a's message clears */
    printf("a %d [%s] %g\n", sa, double_it_last_error(), ((float *)out[0].data)[3]);
    double_it_free(out[0].data);
    printf("b %d %s\n", sb, add_one_last_error());
    b_in.dtype = MYC_F32;
    sb = add_one(&b_in, 1, out, 1);
    printf("b %d [%s] %g\n", sb, add_one_last_error(), ((float *)out[0].data)[2]);
    add_one_free(out[0].data);
    return 0;
}
"""


def test_two_libraries_in_one_program_keep_their_own_messages(tmp_path):
    myc.aot(twice, "f32[4]", str(tmp_path / "liba.so"), "double_it")
    _, hb = myc.aot(plus_one, "f32[N]", str(tmp_path / "libb.so"), "add_one")
    header = Path(hb).read_text()
    assert "const char *add_one_last_error(void);" in header
    assert "void add_one_free(void *ptr);" in header and "myc_last_error" not in header
    src = tmp_path / "main.c"
    src.write_text(TWO_LIBS)
    exe = tmp_path / "main"
    subprocess.run([CC, "-Wall", "-Werror", "-o", str(exe), str(src), f"-I{tmp_path}",
                    f"-L{tmp_path}", "-la", "-lb", f"-Wl,-rpath,{tmp_path}"], check=True)
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                           timeout=60).stdout.splitlines()
    assert lines[0].startswith("a 1 myc: double_it: expected n_inputs = 1 and n_outputs = 1,"
                               " got n_inputs = 1 and n_outputs = 7"), lines
    assert lines[1] == ("b 3 myc: add_one: input 0 (x, expected f32[N]): dtype code is 1, "
                        "expected 0"), lines
    assert lines[2] == "a 0 [] 8", lines
    assert lines[3] == lines[1], lines  # b's message survives a's success
    assert lines[4] == "b 0 [] 4", lines


def test_the_header_states_the_bounds_the_library_checks(tmp_path):
    _, h = myc.aot(plus_one, "f32[N]", str(tmp_path / "libb.so"), "add_one")
    header = Path(h).read_text()
    m = re.search(r"N: a dynamic size, read from the inputs' shapes; 1 <= N <= (\d+) "
                  r"\(2\^(\d+)\)", header)
    assert m and int(m.group(1)) == MAX_BYTES == 1 << int(m.group(2)), header
    assert f"no array of the program may take more than {MAX_BYTES} (2^56) bytes" in header
    docs = (Path(__file__).parents[2] / "docs" / "aot.md").read_text()
    assert "2^56" in docs and "2^40" not in docs and "2^24" not in docs
    src = tmp_path / "bound.c"
    src.write_text(r"""
#include <stdio.h>
#include "libb.h"
int main(void) {
    float x[1] = {1};
    int64_t s[1], st[1] = {0};
    myc_array in = {x, 1, s, st, MYC_F32}, out[1];
    int64_t sizes[] = {@MAX@LL, @MAX@LL + 1, @MAX@LL / 4, @MAX@LL / 4 + 1};
    for (int k = 0; k < 4; k++) {
        s[0] = sizes[k];
        printf("%d %s\n", add_one(&in, 1, out, 1), add_one_last_error());
    }
    return 0;
}
""".replace("@MAX@", str(m.group(1))))
    exe = tmp_path / "bound"
    subprocess.run([CC, "-o", str(exe), str(src), f"-I{tmp_path}", f"-L{tmp_path}", "-lb",
                    f"-Wl,-rpath,{tmp_path}"], check=True)
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                           timeout=60).stdout.splitlines()
    # N = 2^56 floats is 2^58 bytes: within N's bound, beyond the arrays' one
    assert lines[0].startswith("5 myc: add_one: sizes too large (N = 72057594037927936)")
    assert lines[1].startswith("5 ") and f"N must be between 1 and {MAX_BYTES}" in lines[1]
    assert lines[2].startswith("6 myc: add_one: out of memory"), lines  # 2^56 bytes exactly
    assert lines[3].startswith("5 myc: add_one: sizes too large"), lines


def test_two_headers_compile_together_as_cpp(tmp_path):
    """Both headers in one C++ translation unit: the shared ABI block once, each
    library's own helpers."""
    import shutil

    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    myc.aot(twice, "f32[4]", str(tmp_path / "liba.so"), "double_it")
    myc.aot(plus_one, "f32[N]", str(tmp_path / "libb.so"), "add_one")
    src = tmp_path / "both.cc"
    src.write_text('#include "liba.h"\n#include "libb.h"\nint main() {\n'
                   '    return double_it_last_error()[0] + add_one_last_error()[0];\n}\n')
    subprocess.run([cxx, "-Wall", "-Werror", "-o", str(tmp_path / "both"), str(src),
                    f"-I{tmp_path}", f"-L{tmp_path}", "-la", "-lb", f"-Wl,-rpath,{tmp_path}"],
                   check=True)
    assert subprocess.run([str(tmp_path / "both")], check=False, timeout=60).returncode == 0
