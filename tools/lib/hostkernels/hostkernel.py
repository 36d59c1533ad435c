# SPDX-License-Identifier: MIT
"""Host kernels to run hvprobe under: Debian's Linux by series ("6.1",
"6.12"), or a user's own build (a bzImage and its modules folder).

A Debian kernel is the image package that linux-image-amd64 depends on,
at the newest version of that series any apt source offers. It is
fetched as aptdeb.py fetches every package (into a private folder, the file apt names, its SHA256 checked against apt's index) and
unpacked with `dpkg-deb -x` into build/host-kernels/: never installed,
/boot and the package database untouched.

What an L1 needs of it: the image, the release, and the modules KVM, the
virtio transport and 9p need, each with its dependencies as the module's
own `depends=` field names them (the package has no modules.dep: depmod
runs at install time).
"""

import lzma
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ... import ROOT
from ..base import aptdeb, debversion, owner
from ..base.series import SERIES

CACHE = ROOT / "build" / "host-kernels"
META_PACKAGE = "linux-image-amd64"
APT_TIMEOUT_S = 900
# Modules an L1 loads: KVM for either vendor (the init script picks by
# the CPU), the virtio PCI transport and 9p for the shares. Those a
# kernel has built in are simply not found and not needed.
WANTED = ("kvm_amd", "kvm_intel", "virtio_pci", "9pnet_virtio", "9p")


class HostKernelError(Exception):
    """The host kernel cannot be had or used here; the reason is the
    message (a user error or a missing package, never a bug)."""


@dataclass
class HostKernel:
    label: str                  # "6.12", or the user's image name
    vmlinuz: Path
    modules: Path | None        # lib/modules/RELEASE, or None: all built in
    release: str
    package: str | None = None  # Debian's image package and version
    version: str | None = None
    load: list = field(default_factory=list)   # module files, in load order

    def describe(self) -> str:
        what = f"{self.package} {self.version}" if self.package \
            else str(self.vmlinuz)
        return f"Linux {self.release} ({what})"


def _shown(path) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) \
        else str(path)


def _run(argv, **kwargs) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True,
                              errors="replace", stdin=subprocess.DEVNULL,
                              timeout=APT_TIMEOUT_S, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise HostKernelError(f"{argv[0]}: {err}") from None


def newest_in_series(madison, series) -> str | None:
    """The newest version of the meta-package in series, from `apt-cache
    madison`, or None. By Debian's order, not madison's: it lists each
    source's versions, and a pinned or local source may come first."""
    found = []
    for line in madison.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) >= 2 and fields[0] == META_PACKAGE and \
                fields[1].startswith(series + "."):
            found.append(fields[1])
    return debversion.newest(found)


def image_package(show) -> tuple[str | None, str | None]:
    """(package, version) of the image the meta-package's `apt-cache
    show` record depends on, or (None, None)."""
    m = re.search(r"^Depends:.*?\b(linux-image-[\w.+~-]+-amd64)\s*"
                  r"\(= ([^)]+)\)", show, re.MULTILINE)
    return (m.group(1), m.group(2)) if m else (None, None)


def debian_package(series) -> tuple[str, str | None]:
    """(package, version) of Debian's image for series, from apt."""
    if series not in SERIES:
        raise HostKernelError(f"unknown series {series!r} (known: "
                              f"{', '.join(SERIES)}; or give a bzImage path)")
    if not shutil.which("apt-cache"):
        raise HostKernelError("no apt-cache here: give a bzImage path and "
                              "--host-modules instead")
    version = newest_in_series(
        _run(["apt-cache", "madison", META_PACKAGE]).stdout, series)
    if version is None:
        why = " (bookworm-backports: .ci/backports prints its entry)" \
            if series != "6.1" else ""
        raise HostKernelError(f"no apt source offers {META_PACKAGE} "
                              f"{series}{why}; apt-get update may help")
    package, exact = image_package(
        _run(["apt-cache", "show", f"{META_PACKAGE}={version}"]).stdout)
    if package is None:
        raise HostKernelError(f"{META_PACKAGE} {version} names no image")
    return package, exact


def unpacked(directory) -> tuple[Path, Path] | None:
    """(vmlinuz, lib/modules/RELEASE) in an unpacked image, or None."""
    images = sorted(Path(directory).glob("boot/vmlinuz-*"))
    mods = sorted(Path(directory).glob("lib/modules/*"))
    if len(images) != 1 or len(mods) != 1:
        return None
    return images[0], mods[0]


def cached_debian(series, cache=CACHE) -> tuple[str, str] | None:
    """(package, version) of the newest kernel of series already unpacked
    in cache, or None: what a machine without apt's lists (an L1 host
    kernel, which sees the checkout but not /var/lib/apt) can boot."""
    found = {}
    for folder in Path(cache).glob("linux-image-*_*"):
        package, _, version = folder.name.rpartition("_")
        if version.startswith(f"{series}.") and unpacked(folder):
            found[version] = package
    version = debversion.newest(found)
    return None if version is None else (found[version], version)


def fetch_debian(series, cache=CACHE, log=print) -> HostKernel:
    """Debian's kernel for series, from the cache or fetched into it."""
    try:
        package, version = debian_package(series)
    except HostKernelError:
        known = cached_debian(series, cache)
        if known is None:
            raise
        package, version = known
    target = Path(cache) / f"{package}_{version}"
    found = unpacked(target)
    if found is None:
        if not shutil.which("dpkg-deb"):
            raise HostKernelError("no dpkg-deb here to unpack the package")
        log(f"host kernel {series}: downloading {package} {version} into "
            f"{_shown(target)}")
        work = aptdeb.private_dir(cache)
        try:
            deb = aptdeb.download(f"{package}={version}", work)
            tree = work / "tree"
            done = _run(["dpkg-deb", "-x", str(deb), str(tree)])
            if done.returncode or unpacked(tree) is None:
                raise HostKernelError(f"dpkg-deb -x {deb.name} gave no "
                                      f"kernel: {done.stderr.strip()[-200:]}")
            shutil.rmtree(target, ignore_errors=True)
            os.replace(tree, target)
        except aptdeb.AptError as err:
            raise HostKernelError(str(err)) from None
        finally:
            shutil.rmtree(work, ignore_errors=True)
        owner.hand_over(target, recursive=True)
        found = unpacked(target)
    if found is None:   # the unpacked tree was checked before it moved
        raise HostKernelError(f"no kernel in {_shown(target)}")
    vmlinuz, modules = found
    return HostKernel(series, vmlinuz, modules, modules.name, package,
                      version)


def own_build(image, modules=None) -> HostKernel:
    """A user's kernel: a bzImage and, unless KVM is built in, its
    modules folder (lib/modules/RELEASE, as `make modules_install
    INSTALL_MOD_PATH=DIR` leaves it, or DIR itself)."""
    image = Path(image)
    if not image.is_file():
        raise HostKernelError(f"{image}: no such kernel image")
    release = None
    if modules is not None:
        modules = Path(modules)
        below = {p.name: p for p in modules.glob("lib/modules/*")}
        if below:
            modules = below[debversion.newest(below)]
        if not modules.is_dir():
            raise HostKernelError(f"{modules}: no such modules folder")
        release = modules.name
    return HostKernel(image.name, image, modules, release or image.name)


def resolve(spec, modules=None, cache=CACHE, log=print) -> HostKernel:
    """A HostKernel for --host-kernel SPEC: a series, or an image path."""
    if spec in SERIES:
        if modules is not None:
            raise HostKernelError("--host-modules goes with a kernel image "
                                  "path, not a Debian series")
        kernel = fetch_debian(spec, cache, log)
    elif "/" in spec or Path(spec).exists():
        kernel = own_build(spec, modules)
    else:
        raise HostKernelError(f"--host-kernel {spec!r}: neither a Debian "
                              f"series ({', '.join(SERIES)}) nor a file")
    kernel.load = load_order(kernel.modules, WANTED)
    return kernel


def module_name(path) -> str:
    return path.name.split(".ko")[0].replace("-", "_")


def module_bytes(path) -> bytes:
    """A module file's contents, xz-compressed or not."""
    data = Path(path).read_bytes()
    return lzma.decompress(data) if path.name.endswith(".xz") else data


def depends(data) -> list[str]:
    """The module names a module's .modinfo depends= field lists."""
    m = re.search(rb"\0depends=([\w,-]*)\0", b"\0" + data)
    if not m or not m.group(1):
        return []
    return [d.decode().replace("-", "_") for d in m.group(1).split(b",")]


def load_order(modules, wanted) -> list[Path]:
    """The files of wanted and their dependencies, dependencies first;
    names not found are taken as built in."""
    if modules is None:
        return []
    files = {module_name(p): p for p in Path(modules).rglob("*.ko*")
             if p.name.endswith((".ko", ".ko.xz"))}
    order, seen = [], set()

    def visit(name, chain) -> None:
        if name in seen or name not in files:
            return
        if name in chain:
            raise HostKernelError(f"module dependency loop: {chain + [name]}")
        for dep in depends(module_bytes(files[name])):
            visit(dep, chain + [name])
        seen.add(name)
        order.append(files[name])

    for name in wanted:
        visit(name, [])
    return order
