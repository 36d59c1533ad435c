# SPDX-License-Identifier: MIT
"""A tool script without a .py suffix (tools/run, tools/soak, ...) loaded
as a module, so that its tests can call its functions."""

import importlib.machinery
import importlib.util


def load(path, name=None):
    """The module for the script at path (a pathlib.Path)."""
    loader = importlib.machinery.SourceFileLoader(
        name or "hvprobe_" + path.name.replace("-", "_"), str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
