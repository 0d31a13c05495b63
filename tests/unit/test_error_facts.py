"""The error fact of a failed build or test run names the failure: the compiler's error
line, the failing test's assertion, the tool's closing line with its exit status, never the
first line that merely mentions an error word. The outputs are generated the way each tool
prints them, with the lines that mislead a search for error words."""

from __future__ import annotations

import random

import pytest

from baton.core.compaction.retention.error_facts import error_facts, error_line
from baton.core.compaction.retention.span_facts import SpanFacts
from baton.core.conversation.messages import Message, ToolResultBlock, ToolUseBlock

SEEDS = range(3)


def names(seed: int) -> tuple[str, str, int]:
    rng = random.Random(seed)
    module = rng.choice(["parser", "codec", "buffer", "render", "socket"])
    symbol = rng.choice(["frame_len", "next_token", "flush_all", "decode_utf8"])
    return module, symbol, rng.randint(3, 400)


def cmake_gcc_make(seed: int) -> tuple[str, str]:
    module, symbol, line = names(seed)
    failing = (
        f"/src/app/src/{module}.c:{line}:9: error: '{symbol}' undeclared "
        "(first use in this function)"
    )
    output = f"""\
-- The C compiler identification is GNU 13.2.0
-- Detecting C compiler ABI info - done
-- Could NOT find Python3 (missing: Python3_EXECUTABLE Interpreter)
-- Doxygen not found, documentation will not be built
-- Could not find OpenMP: parallel decoding disabled
-- Configuring done (0.4s)
-- Generating done (0.0s)
-- Build files have been written to: /src/app/build
[ 25%] Building C object CMakeFiles/app.dir/src/main.c.o
[ 50%] Building C object CMakeFiles/app.dir/src/{module}.c.o
/src/app/src/{module}.c: In function 'read_all':
{failing}
   {line} |     return {symbol} + 1;
      |            ^~~~~~~~~
/src/app/src/{module}.c:{line}:9: note: each undeclared identifier is reported only once
gmake[2]: *** [CMakeFiles/app.dir/build.make:90: CMakeFiles/app.dir/src/{module}.c.o] Error 1
gmake[1]: *** [CMakeFiles/Makefile2:83: CMakeFiles/app.dir/all] Error 2
gmake: *** [Makefile:91: all] Error 2"""
    return output, failing


def cmake_configure(seed: int) -> tuple[str, str]:
    module, _, line = names(seed)
    output = f"""\
-- The CXX compiler identification is Clang 17.0.6
-- Doxygen not found, documentation will not be built
CMake Error at CMakeLists.txt:{line} (find_package):
  Could not find a package configuration file provided by "{module.title()}Lib"
-- Configuring incomplete, errors occurred!"""
    failing = (
        f"CMake Error at CMakeLists.txt:{line} (find_package): Could not find a package "
        f'configuration file provided by "{module.title()}Lib"'
    )
    return output, failing


def make_only(seed: int) -> tuple[str, str]:
    module, _, _ = names(seed)
    failing = f"make: *** No rule to make target '{module}.o', needed by 'app'.  Stop."
    output = f"warning: could not find optional file config.local\n{failing}"
    return output, f"make: *** No rule to make target '{module}.o', needed by 'app'. Stop."


def linker(seed: int) -> tuple[str, str]:
    module, symbol, _ = names(seed)
    failing = f"/usr/bin/ld: {module}.o: in function `main': undefined reference to `{symbol}'"
    output = f"""\
gcc -o app main.o {module}.o
{failing}
collect2: error: ld returned 1 exit status
make: *** [Makefile:7: app] Error 1"""
    return output, failing


def npm_tsc(seed: int) -> tuple[str, str]:
    module, symbol, line = names(seed)
    failing = (
        f"src/{module}.ts({line},7): error TS2322: Type 'string' is not assignable to type "
        "'number'."
    )
    output = f"""\

> web@1.4.0 prebuild
> rimraf dist/cache || true

rimraf: dist/cache: No such file or directory, nothing to clean

> web@1.4.0 build
> tsc -p tsconfig.json

npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.
{failing}
src/{module}.ts({line + 4},3): error TS2304: Cannot find name '{symbol}'.

Found 2 errors in the same file, starting at: src/{module}.ts:{line}

npm ERR! code 2
npm ERR! path /src/web
npm ERR! command failed
npm ERR! command sh -c tsc -p tsconfig.json
npm ERR! A complete log of this run can be found in: /root/.npm/_logs/debug-0.log"""
    return output, failing


def tsc_pretty(seed: int) -> tuple[str, str]:
    module, symbol, line = names(seed)
    failing = (
        f"src/{module}.ts:{line}:5 - error TS2339: Property '{symbol}' does not exist on "
        "type 'Reader'."
    )
    output = f"""\
{failing}

{line}     reader.{symbol}();
       ~~~~~~~~~

Found 1 error in src/{module}.ts:{line}"""
    return output, failing


def npm_script(seed: int) -> tuple[str, str]:
    module, _, _ = names(seed)
    output = f"""\

> web@1.4.0 lint
> node scripts/check-{module}.js

Warning: no config file found, using the defaults
npm ERR! code ELIFECYCLE
npm ERR! errno 3
npm ERR! web@1.4.0 lint: `node scripts/check-{module}.js`
npm ERR! Exit status 3
npm ERR!
npm ERR! Failed at the web@1.4.0 lint script.
npm ERR! This is probably not a problem with npm. There is likely additional logging output."""
    return output, "npm ERR! Exit status 3"


def pytest_assertion(seed: int) -> tuple[str, str]:
    module, symbol, line = names(seed)
    output = f"""\
============================= test session starts ==============================
platform linux -- Python 3.12.1, pytest-8.3.4, pluggy-1.5.0
rootdir: /src/app
collected 14 items

tests/test_{module}.py .....F........                                    [100%]

=================================== FAILURES ===================================
_____________________________ test_{symbol}_error ______________________________

    def test_{symbol}_error():
        # a missing file is not found, the reader says so
>       assert {symbol}("a b") == ["a", "b"]
E       AssertionError: assert ['a b'] == ['a', 'b']
E         At index 0 diff: 'a b' != 'a'

tests/test_{module}.py:{line}: AssertionError
=========================== short test summary info ============================
FAILED tests/test_{module}.py::test_{symbol}_error - AssertionError: assert ['a b'] == ['a', 'b']
========================= 1 failed, 13 passed in 0.07s ========================="""
    return output, "AssertionError: assert ['a b'] == ['a', 'b']"


def pytest_summary_only(seed: int) -> tuple[str, str]:
    module, symbol, _ = names(seed)
    failing = f"FAILED tests/test_{module}.py::test_{symbol} - KeyError: 'missing'"
    output = f".....F..                          [100%]\n{failing}\n1 failed, 7 passed in 0.02s"
    return output, failing


def cargo_build(seed: int) -> tuple[str, str]:
    module, symbol, line = names(seed)
    output = f"""\
   Compiling libc v0.2.150
   Compiling app v0.1.0 (/src/app)
warning: unused import: `std::io::Error`
 --> src/{module}.rs:1:5
  |
1 | use std::io::Error;
  |     ^^^^^^^^^^^^^^
error[E0425]: cannot find value `{symbol}` in this scope
 --> src/{module}.rs:{line}:13
  |
{line} |     let n = {symbol} + 1;
  |             ^^^^^^^^^ not found in this scope

error: could not compile `app` (bin "app") due to 1 previous error; 1 warning emitted"""
    return output, f"error[E0425]: cannot find value `{symbol}` in this scope"


def cargo_test(seed: int) -> tuple[str, str]:
    module, symbol, line = names(seed)
    output = f"""\
   Compiling app v0.1.0 (/src/app)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.61s
     Running unittests src/lib.rs (target/debug/deps/app-1c2d)

running 3 tests
test {module}::tests::reads_empty ... ok
test {module}::tests::{symbol} ... FAILED

failures:

---- {module}::tests::{symbol} stdout ----
thread '{module}::tests::{symbol}' panicked at src/{module}.rs:{line}:9:
assertion `left == right` failed
  left: 4
 right: 5

failures:
    {module}::tests::{symbol}

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out

error: test failed, to rerun pass `--lib`"""
    failing = (
        f"thread '{module}::tests::{symbol}' panicked at src/{module}.rs:{line}:9: "
        "assertion `left == right` failed"
    )
    return output, failing


def ruff_check(seed: int) -> tuple[str, str]:
    module, _, line = names(seed)
    failing = f"src/{module}.py:{line}:1: F401 [*] `os` imported but unused"
    output = f"{failing}\nFound 1 error.\n[*] 1 fixable with the `--fix` option."
    return output, failing


OUTPUTS = {
    "cmake+gcc+make": cmake_gcc_make,
    "cmake configure": cmake_configure,
    "make": make_only,
    "linker": linker,
    "npm+tsc": npm_tsc,
    "tsc pretty": tsc_pretty,
    "npm script": npm_script,
    "pytest": pytest_assertion,
    "pytest summary": pytest_summary_only,
    "cargo build": cargo_build,
    "cargo test": cargo_test,
    "ruff": ruff_check,
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tool", list(OUTPUTS))
def test_the_error_fact_of_a_build_or_test_run_is_its_failing_line(tool: str, seed: int) -> None:
    output, failing = OUTPUTS[tool](seed)

    assert error_line(output) == failing
    assert error_line(f"Error: Exit code 2\n{output}") == failing  # the client's wrapper


def test_a_build_without_a_compiler_line_is_named_by_its_closing_line() -> None:
    output = (
        "-- Could NOT find Python3 (missing: Python3_EXECUTABLE)\n"
        "ninja: error: loading 'build.ninja': No such file or directory\n"
        "gmake: *** [Makefile:12: all] Error 2"
    )
    # ninja's own "error:" line names the failure; without it, make's closing line does
    assert error_line(output) == "ninja: error: loading 'build.ninja': No such file or directory"
    assert error_line(output.replace("ninja: error: ", "ninja: ")) == (
        "gmake: *** [Makefile:12: all] Error 2"
    )


def failed_call(command: str, output: str) -> list[Message]:
    use = ToolUseBlock(id="toolu_1", name="Bash", input={"command": command})
    result = ToolResultBlock(tool_use_id="toolu_1", content=output, is_error=True)
    return [Message(role="assistant", content=[use]), Message(role="user", content=[result])]


@pytest.mark.parametrize("wrapper", ["Exit code 1", "Error: Exit code 127", "exit status 2"])
def test_a_bare_exit_code_names_the_command_its_call_ran(wrapper: str) -> None:
    messages = failed_call("npm run build --workspace web", wrapper)

    expected = f"{wrapper} from `npm run build --workspace web`"
    assert [fact.line for fact in error_facts(messages)] == [expected]
    assert [fact.line for fact in SpanFacts.extract(messages).errors] == [expected]


def test_an_exit_code_with_a_telling_line_keeps_that_line_and_a_long_command_is_clipped() -> None:
    telling = failed_call("make all", "Exit code 2\nmake: *** [Makefile:3: all] Error 2")
    long_command = "cd /src/app && " + " && ".join(f"step{n} --flag" for n in range(20))
    bare = failed_call(long_command, "Exit code 1")

    assert [f.line for f in error_facts(telling)] == ["make: *** [Makefile:3: all] Error 2"]
    (line,) = [f.line for f in error_facts(bare)]
    assert line.startswith("Exit code 1 from `cd /src/app && step0 --flag")
    assert line.endswith("...`") and len(line) < 110
