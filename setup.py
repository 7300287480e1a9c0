"""Build hook: a wheel carries the repository's catalogs/ and templates/ as package data under
planner/_data/ (read by planner/inputs/resources.py), so git keeps one copy and a regular install
finds them. Everything else is configured in setup.cfg."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA = {"catalogs": "*.yaml", "templates": "*"}  # folder: files shipped, as in the repo


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own folders
        for folder, pattern in DATA.items():
            target = Path(self.build_lib, "planner", "_data", folder)
            self.mkpath(str(target))
            for source in sorted(Path(folder).glob(pattern)):
                if source.is_file():
                    self.copy_file(str(source), str(target / source.name))


setup(cmdclass={"build_py": BuildPyWithData})
