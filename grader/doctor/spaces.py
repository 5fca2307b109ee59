"""The array classes of each memory space (global, shared, local, read-only global) and their
generated hot path.

For each space and number of dimensions, `_fast_methods` generates `_ld2(i, j, site)`,
`_st2(i, j, value, site)`, `_upd2(i, j, op, value, site)`... with the index arithmetic and the
shadow checks inlined: one Python call per access. The generic `_ldn/_stn/_updn(idx, ...)` of
grader/doctor/memory.py handle everything else (slices, more axes). Stamps and epochs are
explained there.
"""

from __future__ import annotations


from grader.doctor.memory import (
    CTX,
    MANY,
    NEVER_WRITTEN,
    UNSET,
    View,
    _conflict,
    _int,
    _keep_cross_reader,
    _note_reader,
    _second_reader,
    _Slice,
    wrap_integer,
)


def _another(stamp) -> bool:
    """Is `stamp` another thread's than the one running? In a warp kernel one thread's
    accesses carry the sub-epochs of its stepping rounds (grader/doctor/warps.py), so within
    the block the thread field decides, not the whole stamp."""
    ctx = CTX
    if stamp >= ctx.bfloor:
        return (stamp >> 1) & MANY != ctx.lin
    return stamp >> 1 != ctx.meh


# -- the shadow checks, one version per memory space --------------------------------------------
class GlobalView(View):
    """Global memory: conflicts inside an epoch and between the blocks of a launch."""

    __slots__ = ()

    def _ldn(self, idx, site):
        f = self._flat(idx, site, False)
        if f is None:
            return self._subview(idx, site)
        self._read_shadow(self.mem, f, site, idx)
        return self._value(f)

    def _read_shadow(self, mem, f, site, idx):
        ctx = CTX
        w = mem.wr[f]
        if w >= ctx.lfloor:
            if w >= ctx.efloor:
                if w >> 1 != ctx.meh:
                    _conflict("raw", self, f, w, mem.ws[f], site, idx)
            elif w < ctx.bfloor:
                _conflict("raw", self, f, w, mem.ws[f], site, idx)
        elif w == NEVER_WRITTEN:
            ctx.on_uninit(self, f, site, idx)
        _note_reader(mem, f, site)

    def _check_write(self, mem, f, site, idx, value, atomic):
        ctx = CTX
        w = mem.wr[f]
        if w >= ctx.lfloor and not (atomic and w & 1):
            if w >= ctx.efloor:
                other = w >> 1 != ctx.meh
                # a warp kernel's sub-epochs: one thread in two sub-epochs is still one writer
                collides = other and (w >> 1) & MANY != ctx.lin
            else:
                other = collides = w < ctx.bfloor
            if other:
                same = self._same(mem, f, value, atomic)
                if collides and not (atomic or w & 1):  # one more thread stores to f (memory.py)
                    dups = mem.dups
                    if dups is None:
                        dups = mem.dups = [0] * len(mem.wr)
                    dups[f] += 1
                    if same and mem.dup_same is None:
                        mem.dup_same = (f, mem.ws[f], idx)
                if not same:
                    _conflict("ww", self, f, w, mem.ws[f], site, idx)
        self._check_readers(mem, f, site, idx)
        mem.wr[f] = ctx.me | atomic
        mem.ws[f] = site

    def _check_readers(self, mem, f, site, idx):
        """A write now: did another thread read the element in this epoch (or another block
        during this launch)?"""
        ctx = CTX
        if mem.xr:
            kept = mem.xr.get(f)
            if kept is not None and kept[0] >= ctx.lfloor:
                _conflict("war", self, f, kept[0], kept[1], site, idx)
        r = mem.rd[f]
        if r < ctx.lfloor or (ctx.bfloor <= r < ctx.efloor):
            return
        if (r >> 1) & MANY == MANY:  # several readers: name one that is not this thread
            first = mem.rd1[f]
            other, other_site = (first, mem.rs[f]) if _another(first) else (mem.rd2[f], mem.rs2[f])
            _conflict("war", self, f, other, other_site, site, idx)
        elif _another(r):
            _conflict("war", self, f, r, mem.rs[f], site, idx)

    @staticmethod
    def _same(mem, f, value, atomic):
        """A plain write of the value already there changes nothing (e.g. flags set to 1)."""
        if atomic:
            return False
        try:
            return bool(mem.vals[f] == mem.stype(value))
        except (TypeError, ValueError, OverflowError):
            return False

    def _stn(self, idx, value, site):
        f = self._flat(idx, site, True)
        if f is None:
            raise IndexError(f"`{self.name}` needs {self.ndim} integer index(es) to be written")
        self._check_write(self.mem, f, site, idx, value, 0)
        self._put(f, value)

    def _updn(self, idx, op, value, site):
        old = self._ldn(idx, site)
        if isinstance(old, View):
            raise IndexError(f"`{self.name}` needs {self.ndim} integer index(es) to be updated")
        self._stn(idx, op(old, value), site)

    def _atomic(self, op, idx, value, site):
        f = self._flat(idx, site, True)
        if f is None:
            raise IndexError(f"cuda.atomic needs one element of `{self.name}`, not a slice")
        if self.mem.wr[f] == NEVER_WRITTEN:
            CTX.on_uninit(self, f, site, idx)
        self._atomic_shadow(f, site, idx)
        old = self._value(f)
        self._put(f, op(old, value))
        return old

    def _atomic_shadow(self, f, site, idx):
        mem, ctx = self.mem, CTX
        self._check_readers(mem, f, site, idx)
        w = mem.wr[f]
        if w >= ctx.lfloor:
            if not w & 1:
                if (w >= ctx.efloor and w >> 1 != ctx.meh) or w < ctx.bfloor:
                    _conflict("ww", self, f, w, mem.ws[f], site, idx)
                mem.xw[f] = (w, mem.ws[f])  # the plain store this atomic covers (memory.py)
            elif mem.xw:
                kept = mem.xw.get(f)
                if kept is not None and kept[0] >= ctx.lfloor:
                    k = kept[0]
                    if (k >= ctx.efloor and k >> 1 != ctx.meh) or k < ctx.bfloor:
                        _conflict("ww", self, f, k, kept[1], site, idx)
        mem.wr[f] = ctx.me | 1
        mem.ws[f] = site


class SharedView(GlobalView):
    """Shared memory: one Memory per block, so no stamp predates the block; a read of an
    element no thread has written (stamp -1) is reported. Stores of several threads to one
    element are not counted: shared memory is a block's scratch space, and its races are found
    as conflicts."""

    __slots__ = ()

    def _check_write(self, mem, f, site, idx, value, atomic):
        ctx = CTX
        w = mem.wr[f]
        if w >= ctx.efloor and not (atomic and w & 1):
            if w >> 1 != ctx.meh and not self._same(mem, f, value, atomic):
                _conflict("ww", self, f, w, mem.ws[f], site, idx)
        self._check_readers(mem, f, site, idx)
        mem.wr[f] = ctx.me | atomic
        mem.ws[f] = site

    def _read_shadow(self, mem, f, site, idx):
        ctx = CTX
        w = mem.wr[f]
        if w >= ctx.efloor:
            if w >> 1 != ctx.meh:
                _conflict("raw", self, f, w, mem.ws[f], site, idx)
        elif w < 0:
            ctx.on_uninit(self, f, site, idx)
        _note_reader(mem, f, site)

    def _atomic(self, op, idx, value, site):
        f = self._flat(idx, site, True)
        if f is None:
            raise IndexError(f"cuda.atomic needs one element of `{self.name}`, not a slice")
        if self.mem.wr[f] < 0:
            CTX.on_uninit(self, f, site, idx)
        self._atomic_shadow(f, site, idx)
        old = self._value(f)
        self._put(f, op(old, value))
        return old


class LocalView(View):
    """A thread's own array: bounds checks, and reads of elements the thread never wrote
    (they hold UNSET until written; a read reports it once and sees the poison value, as on
    grader/backend/simulator.py's patched simulator). No other thread can see it."""

    __slots__ = ()

    def _checked(self, f, site, idx):
        value = self.vals[f]
        if value is UNSET:
            value = _unset_local(self, f, site, idx)
        return value

    def _ldn(self, idx, site):
        f = self._flat(idx, site, False)
        if f is None:
            return self._subview(idx, site)
        return self._checked(f, site, idx)

    def _stn(self, idx, value, site):
        f = self._flat(idx, site, True)
        if f is None:
            raise IndexError(f"`{self.name}` needs {self.ndim} integer index(es) to be written")
        self._put(f, value)

    def _updn(self, idx, op, value, site):
        f = self._flat(idx, site, True)
        if f is None:
            raise IndexError(f"`{self.name}` needs {self.ndim} integer index(es) to be updated")
        self._put(f, op(self._checked(f, site, idx), value))

    def _atomic(self, op, idx, value, site):
        f = self._flat(idx, site, True)
        if f is None:
            raise IndexError(f"cuda.atomic needs one element of `{self.name}`, not a slice")
        old = self._checked(f, site, idx)
        self._put(f, op(old, value))
        return old


def _unset_local(view, f, site, idx):
    """A thread reads a local element it never wrote: report it, then let it hold the poison
    value (a NaN or the most negative integer) from now on."""
    value = view.vals[f] = view.stype(view.mem.data[f])
    CTX.on_uninit(view, f, site, idx)
    return value


# -- the generated hot path ------------------------------------------------------------------------
_NOTE_READER = """
    r = self.rd[f]
    if r != ctx.many:
        if r < ctx.efloor:
            self.rd[f] = ctx.me
            self.rs[f] = site
        elif (r >> 1) & MANY != ctx.lin:
            _second_reader(self.mem, f, r, site)"""
_NOTE_READER_GLOBAL = """
    r = self.rd[f]
    if r != ctx.many:
        if r < ctx.efloor:
            if r >= ctx.lfloor and r < ctx.bfloor:
                _keep_cross_reader(self.mem, f, r)
            self.rd[f] = ctx.me
            self.rs[f] = site
        elif (r >> 1) & MANY != ctx.lin:
            _second_reader(self.mem, f, r, site)"""
_READ_CHECK = {
    "global": """
    ctx = CTX
    w = self.wr[f]
    if w >= ctx.lfloor:
        if w >= ctx.efloor:
            if w >> 1 != ctx.meh:
                _conflict("raw", self, f, w, self.ws[f], site, ({args},))
        elif w < ctx.bfloor:
            _conflict("raw", self, f, w, self.ws[f], site, ({args},))
    elif w == NEVER_WRITTEN:
        ctx.on_uninit(self, f, site, ({args},))"""
    + _NOTE_READER_GLOBAL,
    "shared": """
    ctx = CTX
    w = self.wr[f]
    if w >= ctx.efloor:
        if w >> 1 != ctx.meh:
            _conflict("raw", self, f, w, self.ws[f], site, ({args},))
    elif w < 0:
        ctx.on_uninit(self, f, site, ({args},))"""
    + _NOTE_READER,
    "local": """
    if self.vals[f] is UNSET:
        _unset_local(self, f, site, ({args},))""",
}
_WRITE_CHECK = {
    "global": """
    ctx = CTX
    w = self.wr[f]
    floor = ctx.lfloor
    if w >= floor or self.rd[f] >= floor:
        self._check_write(self.mem, f, site, ({args},), value, 0)
    else:
        self.wr[f] = ctx.me
        self.ws[f] = site""",
    "shared": """
    ctx = CTX
    w = self.wr[f]
    if w >= 0 or self.rd[f] >= 0:
        self._check_write(self.mem, f, site, ({args},), value, 0)
    else:
        self.wr[f] = ctx.me
        self.ws[f] = site""",
    "local": "",
}
_INDEX = '''
    if {not_ints}:
        try:
            {convert}
        except _Slice:
            return self.{slow}
    if {bounds}:
        f = {offset}
    else:
        self._raise(({args},), site, {write})'''
_TEMPLATE = '''
def _ld{a}(self, {args}, site):{index_read}{read_check}
    return self.vals[f]


def _st{a}(self, {args}, value, site):{index_write}{write_check}
    if value.__class__ is not self.stype:
        try:
            value = self.stype(value)
        except OverflowError:
            value = wrap_integer(self.stype, value)
    self.vals[f] = value


def _upd{a}(self, {args}, op, value, site):{index_update}{read_check}
    value = op(self.vals[f], value){write_check}
    if value.__class__ is not self.stype:
        try:
            value = self.stype(value)
        except OverflowError:
            value = wrap_integer(self.stype, value)
    self.vals[f] = value
'''
_OTHER_ARITY = '''
def _ld{a}(self, {args}, site):
    return self._ldn(({args},), site)


def _st{a}(self, {args}, value, site):
    return self._stn(({args},), value, site)


def _upd{a}(self, {args}, op, value, site):
    return self._updn(({args},), op, value, site)
'''
_NAMES = ("i", "j", "k")


def _fast_methods(space: str, ndim: int) -> dict:
    """Source-generated `_ld1.._ld3`, `_st1.._st3`, `_upd1.._upd3` for one space and ndim.
    Stores do not mark their memory dirty: a launch flushes every global array it was given
    that it may have written (grader/doctor/kernel.py)."""
    source = []
    for a in (1, 2, 3):
        names = _NAMES[:a]
        args = ", ".join(names)
        if a != ndim:
            source.append(_OTHER_ARITY.format(a=a, args=args))
            continue
        index = dict(
            args=args,
            not_ints=" or ".join(f"{n}.__class__ is not int" for n in names),
            convert="; ".join(f"{n} = _int({n}, self)" for n in names),
            bounds=" and ".join(f"self.n{d} > {n} >= 0" for d, n in enumerate(names)),
            offset="self.off + " + " + ".join(f"{n} * self.s{d}" for d, n in enumerate(names)),
        )
        source.append(
            _TEMPLATE.format(
                a=a,
                args=args,
                index_read=_INDEX.format(**index, slow=f"_ldn(({args},), site)", write=False),
                index_write=_INDEX.format(**index, slow=f"_stn(({args},), value, site)", write=True),
                index_update=_INDEX.format(**index, slow=f"_updn(({args},), op, value, site)", write=True),
                read_check=_READ_CHECK[space].replace("{args}", args),
                write_check=_WRITE_CHECK[space].replace("{args}", args),
            )
        )
    scope = {
        "CTX": CTX,
        "MANY": MANY,
        "NEVER_WRITTEN": NEVER_WRITTEN,
        "_conflict": _conflict,
        "_int": _int,
        "_Slice": _Slice,
        "_second_reader": _second_reader,
        "_keep_cross_reader": _keep_cross_reader,
        "UNSET": UNSET,
        "_unset_local": _unset_local,
        "wrap_integer": wrap_integer,
    }
    exec(compile("".join(source), f"<kernel doctor {space} {ndim}-d accesses>", "exec"), scope)  # noqa: S102
    return {k: v for k, v in scope.items() if k.startswith(("_ld", "_st", "_upd"))}


_BASES = {"global": GlobalView, "shared": SharedView, "local": LocalView}
CLASSES: dict = {}
"""(space, ndim or None) -> the View subclass with that space's checks: grader/wiring.py puts
them in grader/doctor/memory.py's `VIEW_CLASSES`, which `make_view` reads."""
_CLASSES = CLASSES
for _space, _base in _BASES.items():
    for _ndim in (1, 2, 3, None):
        _methods = _fast_methods(_space, _ndim) if _ndim else _fast_methods(_space, 0)
        _CLASSES[(_space, _ndim)] = type(f"{_base.__name__}{_ndim or 'N'}", (_base,), {"__slots__": (), **_methods})
