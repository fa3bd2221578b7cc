"""The results store: every file and folder ccscope writes, written atomically, never over a user's file.

Two writers, used by the whole package:

- :func:`write_file` writes one file: a temporary file beside it (same folder, so the rename is
  atomic), fsync, ``os.replace``, fsync of the folder.
- :class:`FolderWriter` writes a results folder (``ccscope run -o DIR``, :meth:`ccscope.Result.save`,
  ``ccscope plot``). ``DIR/ccscope-manifest.json`` lists every file ccscope wrote there; only those
  are ever replaced or deleted. A command that fills a folder file by file, each write its own
  (``experiments/ns3/cwnd.py``), names its run, and the manifest's ``runs`` then maps each file to the
  run that wrote it: after a failure half way, the folder's files of the failed run and of an older
  one are told apart.

Temporary files and folders are named ``.ccscope-tmp-<pid>-<token>-<name>`` and live inside the
destination's parent (or, for a missing destination, its nearest existing ancestor). The next write
there removes those whose process is gone.

Why a kill at any moment leaves the old state or the new one:

- A missing ``DIR`` is built whole in a staging folder beside it and renamed into place: before the
  rename there is no ``DIR``, after it the complete one.
- An existing ``DIR`` may hold the user's own files, so it cannot be swapped whole. The new files
  are written into a staging folder inside ``DIR`` together with a plan (files to move in, old
  ccscope files to delete, the new manifest last). Renaming the staging folder to
  ``DIR/.ccscope-commit`` is the commit point. Before it, ``DIR`` is untouched and the staging folder
  is a leftover that the next write removes. After it, every step of the plan is idempotent
  (a move whose source is gone was done; deleting a missing file is done), so whoever next opens
  ``DIR`` through this module (the next run, :func:`recover` called by ``load_result`` and
  ``ccscope plot``) finishes the plan before anything reads the folder. A folder with a commit
  pending is therefore read as the new state, and one without as the old.

Concurrent writers of one ``DIR`` are serialised by an ``flock`` on the folder itself.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Union

from ccscope.arguments import NamedArgument

TMP_PREFIX = ".ccscope-tmp-"
MANIFEST = "ccscope-manifest.json"
COMMIT = ".ccscope-commit"
PLAN = "plan.json"
FORMAT = "ccscope-results"
VERSION = 1  # of the manifest this ccscope writes


class OutputError(NamedArgument, ValueError):
    """An output path ccscope cannot or will not write (the message names the path, and the argument or option
    that gave it: ``out PATH`` from the API, ``-o PATH`` from a command; :meth:`NamedArgument.worded`)."""


class ResultsFolderError(ValueError):
    """A folder given as results that is not one, or holds a file that cannot be read (named)."""


# --------------------------------------------------------------------------- temporary names


def _tmp_name(name: str) -> str:
    return f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}-{name}"


def _owner_alive(name: str) -> bool:
    """True when the process that made temporary `name` may still be running."""
    pid_text = name[len(TMP_PREFIX):].split("-", 1)[0]
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def clean_leftovers(folder: Path) -> list[Path]:
    """Remove ccscope's temporary files and folders in `folder` whose process is gone."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        if not e.name.startswith(TMP_PREFIX) or _owner_alive(e.name):
            continue
        p = Path(e.path)
        if e.is_dir(follow_symlinks=False):
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(p)
    return removed


# --------------------------------------------------------------------------- durability


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems cannot sync a folder; the rename itself is still atomic
        pass
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    for p in folder.iterdir():
        if p.is_file():
            fsync_file(p)
    fsync_dir(folder)


# --------------------------------------------------------------------------- one file


def check_file_destination(
    path: Union[str, Path], option: str = "-o", ours: Optional[Callable[[Path], bool]] = None, what: str = "a file",
) -> Path:
    """Refuse (OutputError) a file destination that is a folder or whose folder cannot be written, and,
    given `ours`, an existing file for which it is false: one ccscope did not write (`what` names the kind)."""
    path = Path(path)
    if path.is_dir():
        raise OutputError.naming(option, "is a folder, expected a file name", value=path, path=True)
    _writable_ancestor(path, option)
    if ours is not None and os.path.lexists(path) and not ours(path):
        raise OutputError.naming(option, f"{path.name} is there and is not {what} ccscope wrote; move it away first",
                                 value=path, path=True)
    return path


def write_file(path: Union[str, Path], write: Callable[[Path], None], mode: Optional[int] = None) -> Path:
    """Write `path` atomically: `write(tmp)` fills a temporary file beside it, which then replaces it.

    The file gets the usual permissions (0666 less the umask) unless `mode` is given.
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(parent)
    tmp = parent / _tmp_name(path.name)
    try:
        write(tmp)
        if not tmp.exists():
            raise OutputError(f"{path}: the writer produced no file")
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(parent)
    return path


def write_text(path: Union[str, Path], text: str) -> Path:
    """:func:`write_file` for text (UTF-8)."""
    return write_file(path, lambda p: p.write_text(text, encoding="utf-8"))


def write_bytes(path: Union[str, Path], data: bytes) -> Path:
    return write_file(path, lambda p: p.write_bytes(data))


# --------------------------------------------------------------------------- results folders


def read_manifest(folder: Path) -> Optional[dict]:
    """The manifest of a results folder, or None when `folder` is not one ccscope wrote."""
    try:
        m = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("files"), list):
        return None
    if not all(isinstance(f, str) and _plain_name(f) for f in m["files"]):
        return None
    return m


def file_runs(manifest: Optional[dict]) -> dict:
    """The manifest's ``runs``: {file: the run that wrote it} for the listed files a named run wrote."""
    runs = (manifest or {}).get("runs")
    if not isinstance(runs, dict):
        return {}
    files = set(manifest["files"])
    return {f: r for f, r in runs.items() if f in files and isinstance(r, str)}


def _plain_name(name: str) -> bool:
    """A file name with no folder part: the manifest can never name anything outside its folder."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def is_results_folder(folder: Union[str, Path]) -> bool:
    return read_manifest(Path(folder)) is not None


@contextmanager
def _locked(folder: Path, shared: bool = False) -> Iterator[None]:
    """A lock on `folder` itself (no lock file is left behind)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _apply_plan(folder: Path) -> None:
    """Finish a committed write of `folder` (idempotent: safe to repeat after a kill)."""
    commit = folder / COMMIT
    if not (commit / PLAN).exists() and not any(commit.iterdir()):
        commit.rmdir()  # killed after the plan's last step, the removal of the plan itself
        return
    try:
        plan = json.loads((commit / PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        # The plan is written before the commit rename, so a commit without one is not ours to finish.
        raise OutputError(f"{commit}: an unfinished write without its plan; move it away and rerun") from None
    for name in plan["move"]:
        if (commit / name).exists():
            os.replace(commit / name, folder / name)
    for name in plan["delete"]:
        (folder / name).unlink(missing_ok=True)
    fsync_dir(folder)
    if (commit / MANIFEST).exists():
        os.replace(commit / MANIFEST, folder / MANIFEST)
        fsync_dir(folder)
    (commit / PLAN).unlink()  # last: a kill before this repeats the (idempotent) plan
    commit.rmdir()


def recover(folder: Union[str, Path]) -> None:
    """Finish a write of `folder` that a kill interrupted after its commit point, and remove leftovers."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    if (folder / COMMIT).exists():
        with _locked(folder):
            if (folder / COMMIT).exists():
                _apply_plan(folder)
    if read_manifest(folder) is not None:
        clean_leftovers(folder)


@contextmanager
def reading(folder: Union[str, Path]) -> Iterator[Path]:
    """Read a results folder: finish a pending write first, and keep writers out while reading."""
    folder = Path(folder)
    recover(folder)
    if not folder.is_dir():
        yield folder
        return
    try:
        lock = _locked(folder, shared=True)
        lock.__enter__()
    except OSError:  # e.g. no permission to open the folder: read without the lock
        yield folder
        return
    try:
        yield folder
    finally:
        lock.__exit__(None, None, None)


def _writable_ancestor(path: Path, option: str) -> Path:
    """The nearest existing ancestor of `path`: it must be a folder ccscope can write in."""
    anc = path.absolute().parent
    while not anc.exists():
        if anc.is_symlink():
            raise OutputError.naming(option, f"{anc} is a broken link", value=path, path=True)
        anc = anc.parent
    if not anc.is_dir():
        raise OutputError.naming(option, f"{anc} is a file, not a folder", value=path, path=True)
    if not os.access(anc, os.W_OK | os.X_OK):
        raise OutputError.naming(option, f"cannot write in {anc} ({_access_reason(anc)})", value=path,
                                 path=True)
    # The mode is not the whole answer (root passes it on a read-only mount, /proc takes no file): a
    # file of ccscope's own made and removed there is, so the write cannot fail at the end, after the work.
    probe = anc / _tmp_name("probe")
    try:
        probe.touch(exist_ok=False)
    except OSError as e:
        raise OutputError.naming(option, f"cannot write in {anc} ({e.strerror or _access_reason(anc)})", value=path,
                                 path=True) from None
    try:
        probe.unlink(missing_ok=True)
    except OSError as e:  # an append-only folder (chattr +a) takes files and lets none go: the commit would fail too
        raise OutputError.naming(option, f"cannot write in {anc} ({e.strerror}: a file made there cannot be removed; "
                                 f"{probe.name} is left there)", value=path, path=True) from None
    return anc


def _access_reason(folder: Path) -> str:
    try:
        st = os.statvfs(folder)
        if st.f_flag & os.ST_RDONLY:
            return "read-only file system"
    except OSError:
        pass
    return "permission denied"


def check_resumable_folder(out: Union[str, Path], markers: Iterable[str], what: str, option: str = "-o") -> None:
    """Refuse, before any work, an output folder a resumable command (sweep, tune) may not write in.

    Such a command keeps its files in the folder as it goes, so the folder must be missing (it is
    made), empty, or one that command wrote before: one of `markers` is there.
    """
    p = Path(out)
    if p.is_symlink() and not p.exists():
        raise OutputError.naming(option, "is a broken link", value=p, path=True)
    if p.exists() and not p.is_dir():
        raise OutputError.naming(option, "is a file, not a folder; give a folder name", value=p, path=True)
    if not p.exists():
        _writable_ancestor(p, option)
        return
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError.naming(option, f"cannot write in this folder ({_access_reason(p)})", value=p, path=True)
    markers = list(markers)
    entries = [e for e in os.listdir(p) if not e.startswith(TMP_PREFIX)]
    if entries and not any(os.path.lexists(p / m) for m in markers):
        raise OutputError.naming(option, f"the folder is not empty and is not a ccscope {what} folder (no "
                                 f"{' or '.join(markers)}); give a new folder", value=p, path=True)


class FolderWriter:
    """Writes one results folder; the destination is checked when this is made, before any work.

    Use as a context manager: fill :attr:`stage` (a staging folder) in the ``with`` block; on a
    normal exit the files are committed, on an exception the staging folder is removed and the
    destination is as it was::

        with FolderWriter(out, overwrite=False) as w:
            (w.stage / "summary.json").write_text(...)

    ``merge=True`` adds the new files to the folder's manifest (``ccscope plot`` adding figures);
    otherwise ccscope's files of the previous write that are not written again are removed.
    ``names`` are the file names this write may produce: each must not exist as a file ccscope did
    not write. ``run`` names the run that writes them (recorded per file in the manifest's ``runs``;
    a file written again without one loses its entry). A folder whose manifest lists one of ``not_of``
    (``compare.json``: a comparison's) is of another kind and refused, so one command never deletes
    what another wrote; so is one whose manifest lists files but not ``own`` (the record every write of
    this kind makes: a run's ``summary.json``), such as a reproduction's figures folder.
    """

    def __init__(
        self,
        out: Union[str, Path],
        *,
        overwrite: bool = False,
        merge: bool = False,
        names: Iterable[str] = (),
        option: str = "-o",
        run: Optional[str] = None,
        not_of: Iterable[str] = (),
        own: Optional[str] = None,
    ) -> None:
        self.path = Path(out)
        self.merge = merge
        self.option = option
        self.run = run
        self._committed = False
        p = self.path
        if p.is_symlink() and not p.exists():
            raise OutputError.naming(option, "is a broken link", value=p, path=True)
        if p.exists() and not p.is_dir():
            raise OutputError.naming(option, "is a file, not a folder; give a folder name", value=p, path=True)
        if p.is_dir():
            if not os.access(p, os.W_OK | os.X_OK):
                raise OutputError.naming(option, f"cannot write in this folder ({_access_reason(p)})", value=p,
                                         path=True)
            recover(p)
            self.old = read_manifest(p)
            if self.old is None:
                self._check_foreign(p, overwrite, names)
            else:
                self._check_version(p)
                for marker in not_of:
                    if marker in self.old["files"]:
                        raise OutputError.naming(option, f"a ccscope results folder of another kind ({marker} in its "
                                                 f"{MANIFEST}); give a new folder", value=p, path=True)
                if own is not None and self.old["files"] and own not in self.old["files"]:
                    raise OutputError.naming(option, f"a ccscope results folder of another kind (no {own} in its "
                                             f"{MANIFEST}); give a new folder", value=p, path=True)
                self._check_names(p, set(self.old["files"]), names)
            self.exists = True
            self.stage_parent = p
        else:
            anc = _writable_ancestor(p, option)
            self.old = None
            self.exists = False
            self.stage_parent = anc
        clean_leftovers(self.stage_parent)
        self.stage = self.stage_parent / _tmp_name(p.name or "out")
        try:
            self.stage.mkdir()
        except OSError as e:
            raise OutputError.naming(option, f"cannot write in {self.stage_parent} ({e.strerror})", value=p,
                                     path=True) from None

    def _check_version(self, p: Path) -> None:
        v = self.old.get("version") if self.old is not None else None
        if isinstance(v, int) and not isinstance(v, bool) and v > VERSION:
            # Its manifest may mean more than this ccscope knows: rewriting it could drop or delete what it lists.
            raise OutputError.naming(
                self.option, f"a results folder of a newer ccscope (manifest version {v}; this one writes version "
                f"{VERSION}); give a new folder, or use that ccscope", value=p, path=True)

    def _check_foreign(self, p: Path, overwrite: bool, names: Iterable[str]) -> None:
        entries = [e for e in os.listdir(p) if not e.startswith(TMP_PREFIX)]
        if entries and not overwrite:
            raise OutputError.naming(
                self.option, f"the folder is not empty and is not a ccscope results folder (no {MANIFEST}); give a "
                "new folder, or {overwrite} to add ccscope's files beside the ones there", value=p, path=True,
                refs={"overwrite": ("overwrite=True", "--overwrite")})
        self._check_names(p, set(), names)

    def _check_names(self, p: Path, own: set, names: Iterable[str]) -> None:
        for name in names:
            if name not in own and os.path.lexists(p / name):
                raise OutputError.naming(self.option, f"{name} is there and ccscope did not write it; move it away "
                                         "first", value=p, path=True)

    def __enter__(self) -> "FolderWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            try:
                self.commit()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()

    def abort(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)

    def commit(self) -> Path:
        """Make the staged files the destination's (see the module docstring for the kill argument)."""
        if self._committed:
            return self.path
        new = sorted(n for n in os.listdir(self.stage) if n != MANIFEST and n != PLAN)
        for n in new:
            if not (self.stage / n).is_file():
                raise OutputError(f"{self.path}: {n}: a results folder holds files only")
        if self.exists and self.path.is_dir():
            self._commit_existing(new)
        else:
            self._commit_new(new)
        self._committed = True
        return self.path

    def _manifest(self, files: list[str], runs: Optional[dict] = None) -> str:
        from ccscope.provenance import build_id

        m = {"format": FORMAT, "version": VERSION, "ccscope": build_id(), "files": files}
        if runs:
            m["runs"] = {f: runs[f] for f in files if f in runs}
        return json.dumps(m, indent=1) + "\n"

    def _runs(self, new: list[str], old: dict) -> dict:
        """Each file's run once `new` are written: theirs is this write's (if named), the others keep theirs."""
        runs = {f: r for f, r in old.items() if f not in new} if self.merge else {}
        if self.run is not None:
            runs.update((f, self.run) for f in new)
        return runs

    def _commit_new(self, new: list[str]) -> None:
        (self.stage / MANIFEST).write_text(self._manifest(new, self._runs(new, {})), encoding="utf-8")
        _fsync_tree(self.stage)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(self.stage, self.path)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise OutputError.naming(self.option, "appeared while ccscope was writing it; rerun", value=self.path,
                                         path=True) from None
            raise
        fsync_dir(self.path.parent)

    def _commit_existing(self, new: list[str]) -> None:
        p = self.path
        with _locked(p):
            if (p / COMMIT).exists():
                _apply_plan(p)
            old = read_manifest(p)
            own = set(old["files"]) if old else set()
            self._check_names(p, own, new)  # again, under the lock: the folder may have changed
            files = sorted(own | set(new)) if self.merge else new
            delete = [] if self.merge else sorted(own - set(new))
            runs = self._runs(new, file_runs(old))
            (self.stage / MANIFEST).write_text(self._manifest(files, runs), encoding="utf-8")
            (self.stage / PLAN).write_text(json.dumps({"move": new, "delete": delete}) + "\n", encoding="utf-8")
            _fsync_tree(self.stage)
            os.rename(self.stage, p / COMMIT)  # the commit point
            fsync_dir(p)
            _apply_plan(p)
