"""Recalculate a workbook with headless LibreOffice, forcing every formula to be computed.

LibreOffice trusts cached values by default (OOXMLRecalcMode=1), which would only echo our own
numbers back; a private profile with OOXMLRecalcMode=0 makes it recalculate on load.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
<prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def require_libreoffice() -> str:
    """The soffice path; skip with a reason when missing, fail under CI=true."""
    path = soffice()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("LibreOffice (soffice) is required when CI=true; .ci/run installs "
                        "libreoffice-calc-nogui")
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-calc-nogui); "
                    "spreadsheet-engine checks skipped")
    return path


def recalculate(src: Path, out_dir: Path) -> Path:
    """Open `src` in LibreOffice, recalculate everything, save as xlsx into `out_dir`."""
    exe = require_libreoffice()
    with tempfile.TemporaryDirectory() as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(PROFILE)
        out_dir.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [exe, "--headless", "--norestore", "--nologo", "--nodefault",
             f"-env:UserInstallation={Path(profile).as_uri()}", "--convert-to", "xlsx",
             "--outdir", str(out_dir), str(src)],
            capture_output=True, text=True, timeout=600)
    produced = out_dir / src.name
    if not produced.exists():  # soffice exits 0 even when it could not load the file
        raise AssertionError(f"LibreOffice did not convert {src}: {result.stdout}{result.stderr}")
    return produced
