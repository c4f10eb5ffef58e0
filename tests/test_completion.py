"""Shell completion (bash): the script Click writes for ``_KDUMP_COMPLETE=bash_source kdump``, run by
bash, completes a FILE|DIR argument of every command (and the first word, ``kdump FILE``) with the
file names there, and a command's name where one matches."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

KDUMP = Path(sys.executable).parent / "kdump"

# ``compopt`` works only inside a completion bash itself started: here it records what the script
# asks for, and what bash then does for ``-o default`` (file names, when nothing else matched) is
# done after the function, as bash does it.
_COMPLETE = r"""
eval "$(_KDUMP_COMPLETE=bash_source kdump)"
wants_files=0
compopt() { [[ "$1 $2" == "-o default" ]] && wants_files=1; }
read -r -a COMP_WORDS <<< "$LINE"
[[ "$LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_kdump_completion kdump
if [[ ${#COMPREPLY[@]} -eq 0 && $wants_files -eq 1 ]]; then
    COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
fi
printf '%s\n' "${COMPREPLY[@]}"
"""


def complete(line: str) -> list[str]:
    env = {**os.environ, "PATH": f"{KDUMP.parent}{os.pathsep}{os.environ.get('PATH', '')}", "LINE": line}
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", _COMPLETE],
        cwd=FIXTURES,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(filter(None, done.stdout.splitlines()))


pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or not KDUMP.exists(), reason="needs bash and the kdump script"
)


@pytest.mark.parametrize(
    "line", ["kdump dump v2-g", "kdump stats v2-g", "kdump verify-crc --shallow v2-g", "kdump v2-g"]
)
def test_a_file_argument_completes_file_names(line: str) -> None:
    assert complete(line) == ["v2-gzip.log"]


def test_a_directory_completes_too() -> None:
    assert "golden" in complete("kdump dump gol")


def test_the_first_word_completes_a_command_where_one_matches() -> None:
    assert complete("kdump verif") == ["verify-crc"]
