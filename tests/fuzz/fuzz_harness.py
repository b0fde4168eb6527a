"""Fuzz harness: run a reader on many damaged inputs in a child process and classify each.

A reader is called once per :class:`Case` in a *child* Python process that has
a memory limit (``resource.RLIMIT_AS``) and is watched with a per-case timeout,
so that a crash of the interpreter (a signal such as SIGSEGV), a hang or an
allocation beyond the limit is seen and classified instead of taking the test
run down. One child runs the cases one after the other (fast); after a crash or
a hang it is replaced by a fresh one and the next case goes on.

Every case gets one outcome (:attr:`Outcome.kind`):

``"ok"``
    The reader returned (and the optional ``check`` accepted the result).
``"ahbm"``
    The reader raised an :class:`~ahbm.errors.AhbmError` subclass (the
    contract for bad input).
``"raw"``
    Any other exception (type and message recorded), ``MemoryError`` and
    ``RecursionError`` included: an allocation beyond the memory limit shows
    up here as ``MemoryError``.
``"hang"``
    No answer within ``timeout`` seconds (the child is killed).
``"crash"``
    The child died (killed by a signal, e.g. ``SIGSEGV``/``SIGABRT``/``SIGKILL``
    from the kernel, or exited).
``"invalid"``
    The reader returned but ``check(result)`` raised (a wrong result).
``"unnamed"``
    The reader raised an AhbmError whose message does not name the input
    file although ``name_in_message=True``.
``"memory"``
    The case raised the child's peak resident memory by more than
    ``max_peak`` bytes (an allocation beyond the read cap that the address
    space limit let through). The peak is measured per case on Linux
    (``/proc/self/clear_refs`` resets ``VmHWM``) and kept in
    :attr:`Outcome.peak`.

Only ``"ok"`` and ``"ahbm"`` are passes.

API
---
``Case(seed, data, suffix="", note="")``
    One input: ``data`` is the file content (bytes), written to a file named
    ``case<suffix>`` in a private temporary folder whose path is passed to the
    reader; with ``as_path=False`` the reader gets ``data`` itself (any
    picklable object). ``seed`` identifies the case (regenerate it from the
    seed), ``note`` says what was done to it ("flip 3 bytes at 12, 80, 513").

``run_cases(reader, cases, *, kwargs=None, check=None, timeout=10.0,
memory_limit=512 * 2**20, max_peak=None, env=None, as_path=True,
name_in_message=False)``
    Runs every case and returns a :class:`FuzzReport`. ``reader`` and
    ``check`` are ``"package.module:function"`` strings (or module-level
    functions, which are imported by name in the child). ``kwargs`` are passed
    to the reader. ``memory_limit`` is the address space (bytes) the child may
    add on top of what it uses after importing the reader (None: no limit);
    ``max_peak`` is what one case may add to the child's peak resident memory
    (None: not checked). ``env`` is applied to ``os.environ`` in the child before the reader is
    imported (e.g. ``{"AHBM_MAX_READ_BYTES": str(64 * 2**20)}`` to lower the
    read cap of :func:`ahbm.io.max_read_bytes`). The child ignores warnings.

``FuzzReport``
    ``.outcomes`` (one :class:`Outcome` per case, in order), ``.counts()``
    (``{"ok": n, "ahbm": n, "raw": n, "hang": n, "crash": n, ...}``),
    ``.failures`` (the outcomes that are not passes), ``.summary()`` (one
    line of counts plus one line per distinct failure, with the seeds).

``assert_clean(report, *, what="")``
    The pytest helper: fails with the summary (failure kinds, exception types
    and messages, and the seeds of the failing inputs) unless every case is a
    pass.

``campaign(reader, cases, *, what, min_ok=20, min_ahbm=20, **run_kwargs)``
    A reader's whole fuzz test: ``run_cases(..., name_in_message=True)``, the
    summary printed, ``assert_clean``, and at least `min_ok` successful reads
    and `min_ahbm` AhbmErrors, so that both paths are exercised.

Mutators (``rng`` is a ``numpy.random.Generator``; each returns the new bytes and
a note): :func:`flip_bits`, :func:`set_bytes`, :func:`truncate`,
:func:`splice`, :func:`write_int`; :func:`mutate` picks one of them.

Example
-------
>>> import numpy as np
>>> raw = b"PathFileType\\t4\\t(X/Y/Z)\\tx.trc\\n"
>>> cases = []
>>> for seed in range(3):
...     data, note = mutate(raw, np.random.default_rng(seed))
...     cases.append(Case(seed, data, ".trc", note))
>>> report = run_cases("ahbm.io:read_trc", cases, timeout=30)  # doctest: +SKIP
>>> assert_clean(report, what="TRC")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing as mp
import os
import re
import shutil
import signal
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "Case",
    "Outcome",
    "FuzzReport",
    "run_cases",
    "assert_clean",
    "campaign",
    "PASS_KINDS",
    "flip_bits",
    "set_bytes",
    "truncate",
    "splice",
    "write_int",
    "mutate",
]

#: Outcome kinds that satisfy the contract.
PASS_KINDS = frozenset({"ok", "ahbm"})
_MESSAGE_CHARS = 400
_STARTUP_TIMEOUT = 120.0


@dataclass(frozen=True)
class Case:
    """One fuzz input: `data` (file bytes, or the object itself with ``as_path=False``)."""

    seed: int
    data: object
    suffix: str = ""
    note: str = ""


@dataclass(frozen=True)
class Outcome:
    """What happened to one case (see the module docstring for the kinds)."""

    seed: int
    note: str
    kind: str
    error_type: str = ""
    message: str = ""
    seconds: float = 0.0
    peak: int = 0  # bytes the case added to the child's peak resident memory (0: unknown)

    @property
    def passed(self) -> bool:
        return self.kind in PASS_KINDS


@dataclass
class FuzzReport:
    """The outcomes of a :func:`run_cases` campaign."""

    reader: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """Number of cases of each kind (every kind listed, zeros included)."""
        c = Counter(o.kind for o in self.outcomes)
        kinds = ("ok", "ahbm", "raw", "hang", "crash", "invalid", "unnamed", "memory")
        return {k: c.get(k, 0) for k in kinds}

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.passed]

    def summary(self, max_groups: int = 20, max_seeds: int = 12) -> str:
        """Counts, then each distinct failure (kind, type, message) with its seeds."""
        counts = self.counts()
        head = f"{self.reader}: {len(self.outcomes)} cases in {self.seconds:.1f} s: " + ", ".join(
            f"{k} {v}" for k, v in counts.items()
        )
        peak = max((o.peak for o in self.outcomes), default=0)
        head += f"; largest peak memory of a case {peak / 2**20:.1f} MiB"
        groups: dict[tuple, list[Outcome]] = {}
        for o in self.failures:
            # group by kind, type and the start of the message with its numbers blanked
            key = re.sub(r"\d+", "#", o.message)[:80]
            groups.setdefault((o.kind, o.error_type, key), []).append(o)
        lines = [head]
        for (kind, etype, _), outs in list(groups.items())[:max_groups]:
            seeds = ", ".join(str(o.seed) for o in outs[:max_seeds])
            more = f" (+{len(outs) - max_seeds} more)" if len(outs) > max_seeds else ""
            first = outs[0]
            lines.append(
                f"  {kind} {etype}: {first.message[:200]!r} -- {len(outs)} case(s), seeds "
                f"{seeds}{more}; e.g. seed {first.seed}: {first.note}"
            )
        if len(groups) > max_groups:
            lines.append(f"  ... {len(groups) - max_groups} more distinct failures")
        return "\n".join(lines)


def assert_clean(report: FuzzReport, *, what: str = "") -> None:
    """Fail (AssertionError with the seeds of the failing inputs) unless every case passed."""
    if report.failures:
        raise AssertionError(
            f"{what or report.reader}: {len(report.failures)} of {len(report.outcomes)} inputs "
            f"broke the AhbmError contract\n{report.summary()}"
        )


def campaign(reader, cases, *, what: str, min_ok: int = 20, min_ahbm: int = 20, **kwargs):
    """The fuzz test of one reader: :func:`run_cases` with ``name_in_message=True``, the
    summary printed, :func:`assert_clean`, and at least `min_ok` reads and `min_ahbm`
    AhbmErrors (both paths exercised). `kwargs` go to :func:`run_cases`."""
    report = run_cases(reader, cases, name_in_message=True, **kwargs)
    print(report.summary())
    assert_clean(report, what=what)
    counts = report.counts()
    assert counts["ok"] >= min_ok and counts["ahbm"] >= min_ahbm, (
        f"{what}: the cases exercise too little ({counts}); make fewer of them fatal or "
        "more of them damaged"
    )
    return report


# ----------------------------------------------------------------------------
# mutators
# ----------------------------------------------------------------------------


def _span(n: int, region) -> tuple[int, int]:
    a, b = (0, n) if region is None else (max(0, region[0]), min(n, region[1]))
    return (a, b) if b > a else (0, n)


def flip_bits(raw: bytes, rng, *, n: int | None = None, region=None) -> tuple[bytes, str]:
    """Flip one bit in each of `n` (1-4) random bytes, within `region` (start, stop) if given."""
    if not raw:
        return raw, "empty"
    a, b = _span(len(raw), region)
    n = int(rng.integers(1, 5)) if n is None else n
    out = bytearray(raw)
    pos = sorted(int(p) for p in rng.integers(a, b, n))
    for p in pos:
        out[p] ^= 1 << int(rng.integers(0, 8))
    return bytes(out), f"flip bits at {pos}"


def set_bytes(raw: bytes, rng, *, n: int | None = None, region=None) -> tuple[bytes, str]:
    """Set `n` (1-4) random bytes to random values (0x00, 0xFF and 0x80 favoured)."""
    if not raw:
        return raw, "empty"
    a, b = _span(len(raw), region)
    n = int(rng.integers(1, 5)) if n is None else n
    out = bytearray(raw)
    edits = []
    for p in rng.integers(a, b, n):
        v = int(rng.choice([0, 0xFF, 0x80, 0x7F, int(rng.integers(0, 256))]))
        out[int(p)] = v
        edits.append((int(p), v))
    return bytes(out), f"set bytes {edits}"


def truncate(raw: bytes, rng, *, region=None) -> tuple[bytes, str]:
    """Cut the content at a random offset (within `region` if given)."""
    a, b = _span(len(raw) + 1, region)
    cut = int(rng.integers(a, b)) if b > a else 0
    return raw[:cut], f"truncate at {cut} of {len(raw)}"


def splice(raw: bytes, rng, *, region=None) -> tuple[bytes, str]:
    """Duplicate, delete or insert random bytes in a random block (shifts what follows)."""
    if not raw:
        return bytes(rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8)), "random"
    a, b = _span(len(raw), region)
    p = int(rng.integers(a, b))
    k = int(rng.integers(1, 65))
    how = int(rng.integers(0, 3))
    if how == 0:
        return raw[:p] + raw[p : p + k] + raw[p:], f"duplicate {k} bytes at {p}"
    if how == 1:
        return raw[:p] + raw[p + k :], f"delete {k} bytes at {p}"
    junk = bytes(rng.integers(0, 256, k, dtype=np.uint8))
    return raw[:p] + junk + raw[p:], f"insert {k} random bytes at {p}"


def write_int(
    raw: bytes, rng, offset: int, size: int, *, byteorder: str = "little", value=None
) -> tuple[bytes, str]:
    """Overwrite the `size`-byte integer at `offset` with an extreme or random value."""
    if offset < 0 or offset + size > len(raw):
        return raw, "offset out of range"
    top = 2 ** (8 * size)
    if value is None:
        anything = int(rng.integers(0, min(top, 2**62)))
        value = int(rng.choice([0, 1, top - 1, top // 2, top // 2 - 1, anything]))
    out = bytearray(raw)
    out[offset : offset + size] = (int(value) % top).to_bytes(size, byteorder)
    return bytes(out), f"write {value} as {size}-byte int at {offset}"


def mutate(raw: bytes, rng, *, region=None) -> tuple[bytes, str]:
    """One random mutation: bit flips, byte sets, a truncation or a splice."""
    k = int(rng.integers(0, 8))
    if k < 3:
        return flip_bits(raw, rng, region=region)
    if k < 6:
        return set_bytes(raw, rng, region=region)
    if k == 6:
        return truncate(raw, rng, region=region)
    return splice(raw, rng, region=region)


# ----------------------------------------------------------------------------
# the child process
# ----------------------------------------------------------------------------


def _resolve(spec):
    """A callable from ``"module:function"`` (or the callable itself)."""
    if spec is None or callable(spec):
        return spec
    module, _, name = str(spec).partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _spec_name(spec) -> str:
    if callable(spec):
        return f"{spec.__module__}:{spec.__qualname__}"
    return str(spec)


def _status(key: str) -> int:
    """A ``/proc/self/status`` memory field in bytes (0 if unknown)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> bool:
    """Reset the peak resident memory (``VmHWM``) of this process; False if impossible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _worker(
    conn, reader, check, kwargs, as_path, memory_limit, env, folder, name_in_message, warmup
):
    import warnings

    os.environ.update(env or {})
    warnings.simplefilter("ignore")
    reader = _resolve(reader)
    check = _resolve(check)
    from ahbm.errors import AhbmError

    if warmup is not None:  # compiled code loads (or compiles) here, not in a measured case
        _resolve(warmup)()

    base = _status("VmSize:")  # 0 where /proc is missing: no limit there (Linux only)
    if memory_limit is not None and base:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = base + int(memory_limit)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    conn.send(("ready", os.getpid()))
    path = Path(folder)
    while True:
        msg = conn.recv()
        if msg is None:
            return
        index, data, suffix = msg
        target = data
        if as_path:
            target = path / f"case{suffix}"
            target.write_bytes(data)
        measured = _reset_peak()
        rss0 = _status("VmRSS:")
        t0 = time.perf_counter()
        kind, etype, text = "ok", "", ""
        try:
            result = reader(target, **kwargs)
            if check is not None:
                try:
                    check(result)
                except BaseException as err:  # noqa: BLE001 - classified
                    kind, etype, text = "invalid", type(err).__name__, str(err)
            del result
        except AhbmError as err:
            kind, etype, text = "ahbm", type(err).__name__, str(err)
            if name_in_message and as_path and target.name not in text:
                kind = "unnamed"
        except BaseException as err:  # noqa: BLE001 - this is what the harness looks for
            kind, etype = "raw", type(err).__name__
            try:
                tb = traceback.extract_tb(err.__traceback__)[-1]
                where = f" [{Path(tb.filename).name}:{tb.lineno}]"
            except Exception:  # noqa: BLE001
                where = ""
            text = f"{err}"[:_MESSAGE_CHARS] + where
        dt = time.perf_counter() - t0
        peak = max(_status("VmHWM:") - rss0, 0) if measured else 0
        if as_path:
            with contextlib.suppress(OSError):
                target.unlink()
        conn.send((index, kind, etype, text[:_MESSAGE_CHARS], dt, peak))


class _Child:
    """A worker process and its end of the pipe."""

    def __init__(self, ctx, args):
        self.conn, child_conn = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child_conn, *args), daemon=True)
        self.proc.start()
        child_conn.close()
        if not self.conn.poll(_STARTUP_TIMEOUT):
            self.kill()
            raise RuntimeError("fuzz worker did not start within the startup timeout")
        try:
            self.conn.recv()
        except EOFError:
            self.proc.join(5)
            raise RuntimeError(
                f"fuzz worker died while starting (exit code {self.proc.exitcode}); "
                "check the reader spec and the memory limit"
            ) from None

    def kill(self):
        with contextlib.suppress(Exception):
            self.proc.kill()
        self.proc.join(10)
        with contextlib.suppress(Exception):
            self.conn.close()

    def stop(self):
        with contextlib.suppress(Exception):
            self.conn.send(None)
        self.proc.join(10)
        if self.proc.is_alive():
            self.kill()
        with contextlib.suppress(Exception):
            self.conn.close()


def _death(proc) -> tuple[str, str]:
    proc.join(10)
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return name, f"the reader's process was killed by {name}"
    return f"exit {code}", f"the reader's process exited with code {code}"


def run_cases(
    reader: str | Callable,
    cases: Iterable[Case],
    *,
    kwargs: dict | None = None,
    check: str | Callable | None = None,
    timeout: float = 10.0,
    memory_limit: int | None = 512 * 2**20,
    max_peak: int | None = None,
    env: dict | None = None,
    as_path: bool = True,
    name_in_message: bool = False,
    warmup: str | Callable | None = None,
) -> FuzzReport:
    """Run `reader` on every case in a memory-limited child process; classify each outcome.

    Parameters
    ----------
    reader : str or callable
        ``"package.module:function"`` (or a module-level function); called as
        ``reader(path, **kwargs)`` (``reader(case.data, **kwargs)`` when
        ``as_path=False``).
    cases : iterable of Case
    kwargs : dict, optional
        Keyword arguments of the reader.
    check : str or callable, optional
        Called on each result; an exception makes the case ``"invalid"``.
    timeout : float
        Seconds a case may take before it counts as a hang (the child is killed).
    memory_limit : int or None
        Bytes of address space the child may add after importing the reader
        (enforced on Linux, where ``/proc`` gives the current size).
    max_peak : int or None
        Bytes a case may add to the child's peak resident memory; more is the
        failure ``"memory"`` (None: not checked).
    env : dict, optional
        Environment variables set in the child before the reader is imported.
    as_path : bool
        Pass a file path (True) or the case data itself (False).
    name_in_message : bool
        An AhbmError whose message does not contain the file name counts as
        ``"unnamed"`` (a failure).
    warmup : str or callable, optional
        Called with no argument once in each worker before its first case,
        unmeasured and before the address-space limit: it should run the
        reader's compiled code, which then loads (or compiles, on a fresh
        install) there, so that no case is charged with it.

    Returns
    -------
    FuzzReport
    """
    ctx = mp.get_context("spawn")
    folder = tempfile.mkdtemp(prefix="ahbm-fuzz-")
    args = (
        _spec_name(reader) if callable(reader) else reader,
        None if check is None else (_spec_name(check) if callable(check) else check),
        dict(kwargs or {}),
        as_path,
        memory_limit,
        dict(env or {}),
        folder,
        name_in_message,
        None if warmup is None else (_spec_name(warmup) if callable(warmup) else warmup),
    )
    report = FuzzReport(reader=_spec_name(reader))
    t_start = time.perf_counter()
    child = None
    try:
        for index, case in enumerate(cases):
            if child is None:
                child = _Child(ctx, args)
            child.conn.send((index, case.data, case.suffix))
            t0 = time.perf_counter()
            peak = 0
            if child.conn.poll(timeout):
                try:
                    _, kind, etype, text, dt, peak = child.conn.recv()
                    if max_peak is not None and peak > max_peak and kind in PASS_KINDS:
                        text = f"peak memory grew by {peak / 2**20:.1f} MiB ({kind}: {text})"
                        kind, etype = "memory", "peak"
                except (EOFError, OSError):
                    etype, text = _death(child.proc)
                    kind, dt = "crash", time.perf_counter() - t0
                    child.kill()
                    child = None
            else:
                child.kill()
                child = None
                kind, etype = "hang", "timeout"
                text, dt = f"no answer within {timeout:g} s", time.perf_counter() - t0
            report.outcomes.append(Outcome(case.seed, case.note, kind, etype, text, dt, peak))
    finally:
        if child is not None:
            child.stop()
        shutil.rmtree(folder, ignore_errors=True)
        report.seconds = time.perf_counter() - t_start
    return report
