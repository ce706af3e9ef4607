"""Third-party programs for the benchmarks, built as their own documentation says, from a source
tree the user names (nothing of theirs is kept in this tree): HPL (`--hpl-src`, the netlib HPL
2.x layout: Make.top, a Make.<arch> build script, `make arch=<arch>`, bin/<arch>/xhpl reading
HPL.dat) and the OSU micro-benchmarks (`--osu-src`, autotools: `configure CC=... CXX=...` and
`make`, here in a build directory of its own per implementation) and IOR (`--ior-src`, a git
checkout of github.com/hpc/ior or a release: `./bootstrap` when there is no configure yet, then
`configure CC=...` and `make` in a copy per implementation, src/ior), and the NAS Parallel
Benchmarks (`--npb-src`, an NPB3.4-MPI tree: config/make.def with the wrappers, `make KERNEL`),
and LULESH 2.0 (`--lulesh-src`, github.com/LLNL/LULESH: its Makefile with MPICXX the C++ wrapper
and its serial flags, one thread per rank).

Each is built three ways from the same source, with the compilers of run.py's Impls (tmpicc,
mpicc.openmpi, mpicc.mpich). This file builds, writes inputs and reads outputs; run.py runs.
"""

import json
import os
import re
import shutil
import subprocess


class BuildError(Exception):
    pass


# ---------------------------------------------------------------------------- HPL

HPL_NB = 128  # block size: the usual choice for a 64-bit x86 core with OpenBLAS


def hpl_check_tree(src):
    """Why src is not an HPL source tree (None when it is)."""
    if not os.path.isdir(src):
        return f"{src}: not a directory"
    if os.path.exists(os.path.join(src, "src", "hpcc.c")):
        return (f"{src} is an HPC Challenge tree: its hpcc runs every HPCC test (minutes per run); "
                "give an HPL tree (its own Make.top and testing/ptest)")
    for f in ("Make.top", "Makefile", os.path.join("testing", "ptest", "HPL_pddriver.c")):
        if not os.path.exists(os.path.join(src, f)):
            return f"{src}: no {f}: not an HPL source tree (netlib HPL 2.x layout)"
    return None


def hpl_arch_file(top, cc, cflags):
    """The text of an HPL build script (Make.<arch>, the variables HPL's own Make.* files set)
    for compiler cc in the copy at top: Debian's OpenBLAS through its Fortran 77 interface
    (dgemm_ ...: HPL's default, F2CDEFS for gcc's naming), the MPI from the compiler wrapper."""
    flags = " ".join(cflags)
    return f"""# written by tests/bench/thirdparty.py (hpl_arch_file)
SHELL        = /bin/sh
CD           = cd
CP           = cp
LN_S         = ln -s
MKDIR        = mkdir -p
RM           = /bin/rm -f
TOUCH        = touch
ARCH         = $(arch)
TOPdir       = {top}
INCdir       = $(TOPdir)/include
BINdir       = $(TOPdir)/bin/$(ARCH)
LIBdir       = $(TOPdir)/lib/$(ARCH)
HPLlib       = $(LIBdir)/libhpl.a
MPinc        =
MPlib        =
LAinc        =
LAlib        = -lopenblas
F2CDEFS      = -DAdd_ -DF77_INTEGER=int -DStringSunStyle
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH) $(LAinc) $(MPinc)
HPL_LIBS     = $(HPLlib) $(LAlib) $(MPlib) -lm
HPL_OPTS     =
HPL_DEFS     = $(F2CDEFS) $(HPL_OPTS) $(HPL_INCLUDES)
CC           = {cc}
CCNOOPT      = $(HPL_DEFS)
CCFLAGS      = $(HPL_DEFS) {flags}
LINKER       = $(CC)
LINKFLAGS    = $(CCFLAGS)
ARCHIVER     = ar
ARFLAGS      = r
RANLIB       = echo
"""


def hpl_dat(n, nb, p, q):
    """An HPL.dat (HPL's input: one value per line, in the order HPL reads them) for one problem
    of order n, block nb, on a p x q grid; results to stdout; the settings of HPL's sample."""
    lines = [
        ("HPL input, tests/bench/run.py", ""), ("TMPI benchmarks", ""),
        ("HPL.out", "output file name (if any)"), ("6", "device out (6=stdout,7=stderr,file)"),
        ("1", "# of problems sizes (N)"), (str(n), "Ns"), ("1", "# of NBs"), (str(nb), "NBs"),
        ("0", "PMAP process mapping (0=Row-,1=Column-major)"), ("1", "# of process grids (P x Q)"),
        (str(p), "Ps"), (str(q), "Qs"), ("16.0", "threshold"), ("1", "# of panel fact"),
        ("2", "PFACTs (0=left, 1=Crout, 2=Right)"), ("1", "# of recursive stopping criterium"),
        ("4", "NBMINs (>= 1)"), ("1", "# of panels in recursion"), ("2", "NDIVs"),
        ("1", "# of recursive panel fact."), ("1", "RFACTs (0=left, 1=Crout, 2=Right)"),
        ("1", "# of broadcast"), ("1", "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)"),
        ("1", "# of lookahead depth"), ("1", "DEPTHs (>=0)"), ("2", "SWAP (0=bin-exch,1=long,2=mix)"),
        ("64", "swapping threshold"), ("0", "L1 in (0=transposed,1=no-transposed) form"),
        ("0", "U  in (0=transposed,1=no-transposed) form"), ("1", "Equilibration (0=no,1=yes)"),
        ("8", "memory alignment in double (> 0)"),
    ]
    return "".join(f"{v:<13}{c}\n" if c else v + "\n" for v, c in lines)


def grid(n):
    """The squarest p x q = n with p <= q (HPL runs best on a near-square grid)."""
    p = int(n ** 0.5)
    while n % p:
        p -= 1
    return p, n // p


def _stamp_ok(path, want):
    try:
        with open(path) as f:
            return json.load(f) == want
    except (OSError, ValueError):
        return False


def _make(cmd, cwd, log_path):
    with open(log_path, "w") as log:
        r = subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        with open(log_path) as f:
            tail = f.read()[-2500:]
        raise BuildError(f"{' '.join(cmd)} in {cwd} failed (rc {r.returncode}; {log_path}):\n{tail}")


def _build_once(src, dest, impl, why, key, missing, build, what, copy=(".git",)):
    """The steps every build here shares: refuse a tree its check rejected (why, or None), keep
    the build at dest/impl while its stamp (dest/impl.stamp: src and key, a dict of what else
    the build depends on) is the same and missing(top) lists nothing, else start again from a
    fresh copy of src at top (copy: the name patterns left out; None: an empty build directory
    instead), run build(top, log) (log: the prefix for its log files) and raise BuildError when
    missing(top) still lists something (what: "NAME built with COMPILER"). Returns top."""
    if why:
        raise BuildError(why)
    top = os.path.join(dest, impl)
    stamp = os.path.join(dest, impl + ".stamp")
    want = {"src": os.path.abspath(src), **key}
    if _stamp_ok(stamp, want) and not missing(top):
        return top
    if os.path.exists(stamp):
        os.unlink(stamp)
    shutil.rmtree(top, ignore_errors=True)
    if copy is None:
        os.makedirs(top)
    else:
        shutil.copytree(src, top, symlinks=True, ignore=shutil.ignore_patterns(*copy))
    build(top, os.path.join(dest, impl))
    gone = missing(top)
    if gone:
        raise BuildError(f"{what} but {', '.join(gone)} missing")
    with open(stamp, "w") as f:
        json.dump(want, f)
    return top


def _absent(*paths):
    """missing() for _build_once: those of paths that do not exist (relative to top)."""
    return lambda top: [p for p in (os.path.join(top, q) for q in paths) if not os.path.exists(p)]


def build_hpl(src, dest, impl, cc, cflags):
    """HPL from src built with compiler cc (a list: the wrapper) in a copy at dest/impl, as
    HPL's INSTALL says (Make.<arch> in the top directory, `make arch=<arch>`); returns the
    directory of xhpl (where HPL.dat goes). Kept while the source, compiler and flags are the
    same (a stamp file); raises BuildError with the log's tail."""
    arch = "tmpibench"
    text = hpl_arch_file(os.path.join(dest, impl), " ".join(cc), cflags)
    xhpl = os.path.join("bin", arch, "xhpl")

    def build(top, log):
        with open(os.path.join(top, f"Make.{arch}"), "w") as f:
            f.write(text)
        _make(["make", f"arch={arch}"], top, log + ".log")

    top = _build_once(src, dest, impl, hpl_check_tree(src), {"arch_file": text}, _absent(xhpl),
                      build, f"HPL built with {cc[0]}", copy=(".git", ".hg"))
    return os.path.dirname(os.path.join(top, xhpl))


HPL_ROW = re.compile(r"^(W[RC]\S*)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.eE+-]+)\s*$", re.M)
HPL_PASSED = re.compile(r"^\s*(\d+) tests? completed and passed residual checks", re.M)
HPL_FAILED = re.compile(r"^\s*(\d+) tests? completed and failed residual checks", re.M)


class WrongAnswer(Exception):
    pass


def parse_hpl(text):
    """HPL's result lines as run.py results [{n, nb, p, q, sec, gflops}]; raises WrongAnswer
    when HPL reports a failed residual check, or results without its summary of passed ones."""
    rows = [{"n": int(m.group(2)), "nb": int(m.group(3)), "p": int(m.group(4)),
             "q": int(m.group(5)), "sec": float(m.group(6)), "gflops": float(m.group(7))}
            for m in HPL_ROW.finditer(text)]
    passed = sum(int(x) for x in HPL_PASSED.findall(text))
    failed = sum(int(x) for x in HPL_FAILED.findall(text))
    if failed or (rows and passed != len(rows)) or "FAILED" in text:
        raise WrongAnswer(f"HPL: {failed} failed residual checks, {passed} passed of {len(rows)}")
    return rows


# ---------------------------------------------------------------------------- OSU

def osu_check_tree(src):
    if not os.path.exists(os.path.join(src, "configure")):
        return f"{src}: no configure script: not an OSU micro-benchmarks release tree"
    if os.path.exists(os.path.join(src, "config.status")):
        return (f"{src} is configured in place; a build directory per MPI needs a clean tree "
                "(make distclean there)")
    return None


def build_osu(src, dest, impl, cc, cxx):
    """The OSU micro-benchmarks from src, as their README says (`configure CC=... CXX=...`,
    `make`), in the build directory dest/impl; returns that directory."""

    def build(top, log):
        _make([os.path.join(os.path.abspath(src), "configure"), "CC=" + " ".join(cc),
               "CXX=" + " ".join(cxx)], top, log + ".log.configure")
        _make(["make", f"-j{os.cpu_count() or 1}"], top, log + ".log")

    def missing(top):
        return [] if osu_program(top, "osu_latency") else [os.path.join(top, "**", "osu_latency")]

    return _build_once(src, dest, impl, osu_check_tree(src), {"cc": cc, "cxx": cxx}, missing,
                       build, f"the OSU micro-benchmarks built with {cc[0]}", copy=None)


def osu_program(bdir, name):
    """Path of benchmark name in an OSU build directory (its layout differs between releases:
    c/mpi/pt2pt/standard/ in 7.x, mpi/pt2pt/ before), or None."""
    for d, _, files in os.walk(bdir):
        if name in files and os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


OSU_LINE = re.compile(r"^\s*(\d+)\s+([0-9.]+)\b", re.M)


def parse_osu(text):
    """An OSU benchmark's table (`SIZE VALUE ...` under '#' headers) as [{size, value}]."""
    return [{"size": int(m.group(1)), "value": float(m.group(2))} for m in OSU_LINE.finditer(text)]


# ---------------------------------------------------------------------------- IOR

def ior_check_tree(src):
    for f in ("configure.ac", os.path.join("src", "ior.c")):
        if not os.path.exists(os.path.join(src, f)):
            return f"{src}: no {f}: not an IOR source tree (github.com/hpc/ior)"
    return None


def build_ior(src, dest, impl, cc):
    """IOR from src as its README says (`./bootstrap` for a git checkout, `configure CC=...`,
    `make`) in a copy at dest/impl; returns the path of the ior program."""

    def build(top, log):
        if not os.path.exists(os.path.join(top, "configure")):
            _make(["./bootstrap"], top, log + ".log.bootstrap")
        _make(["./configure", "CC=" + " ".join(cc)], top, log + ".log.configure")
        _make(["make", f"-j{os.cpu_count() or 1}"], top, log + ".log")

    prog = os.path.join("src", "ior")
    top = _build_once(src, dest, impl, ior_check_tree(src), {"cc": cc}, _absent(prog), build,
                      f"IOR built with {cc[0]}")
    return os.path.join(top, prog)





def parse_ior(text):
    """IOR's per-iteration result lines (`write BW(MiB/s) IOPS latency block(KiB) ...`) as
    [{op: 0 write / 1 read, value: MiB/s}]; raises WrongAnswer when IOR reports an error or a
    data check failure (-W/-R)."""
    if re.search(r"^ERROR|WARNING: incorrect data|Errors found", text, re.M):
        raise WrongAnswer("IOR: " + text[-300:])
    rows = []
    for line in text.splitlines():
        f = line.split()
        # an iteration's line: op bw iops latency block xfer open wr/rd close total iter (the
        # summary lines at the end have many more fields)
        if len(f) == 11 and f[0] in ("write", "read") and f[10].isdigit():
            rows.append({"op": 0 if f[0] == "write" else 1, "value": float(f[1])})
    return rows


# ---------------------------------------------------------------------------- NPB

# The NAS Parallel Benchmarks 3.4 MPI kernels the npb figure runs: the seven Fortran ones and
# IS (C).  BT and SP need a square number of ranks (4 is).
NPB_KERNELS = ["cg", "mg", "ft", "ep", "lu", "bt", "sp", "is"]


def npb_check_tree(src):
    # 3.4 has fixed-form sources (cg.f), 3.4.1 and later free form (cg.f90)
    for fs in (("config",), ("sys/setparams.c",), ("CG/cg.f", "CG/cg.f90"), ("IS/is.c",)):
        if not any(os.path.exists(os.path.join(src, f)) for f in fs):
            return f"{src}: no {fs[-1]}: not an NPB3.4-MPI tree"
    return None


def npb_make_def(fc, cc, extra_f, extra_c):
    """config/make.def as NPB's README says (MPIFC the Fortran wrapper, MPICC the C one).
    randdp: the portable random-number routine (randi8's hexadecimal constants are refused by
    gfortran 10 and later); -fallow-argument-mismatch: NPB passes buffers of several types to
    one MPI routine through mpif.h, which gfortran 10 and later refuse without it."""
    return f"""# written by tests/bench/thirdparty.py (npb_make_def)
MPIFC = {fc}
FLINK = $(MPIFC)
FMPI_LIB =
FMPI_INC =
FFLAGS = -O3 -fallow-argument-mismatch
FLINKFLAGS = $(FFLAGS){extra_f}
MPICC = {cc}
CLINK = $(MPICC)
CMPI_LIB =
CMPI_INC =
CFLAGS = -O3
CLINKFLAGS = $(CFLAGS){extra_c}
CC = gcc
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randdp
"""


def build_npb(src, dest, impl, fc, cc, klass, nprocs):
    """The NPB kernels of class klass for nprocs ranks from src, built with the wrappers fc and
    cc in a copy at dest/impl (`make KERNEL NPROCS=n CLASS=c`); returns its bin directory.
    A mirror whose programs call timing hooks (a kernel_stats/ directory) gets those built with
    the same wrappers and linked.  Kept while the source, wrappers and class are the same."""

    def build(top, log):
        os.makedirs(os.path.join(top, "bin"), exist_ok=True)
        # objects and modules a build in the source tree left would be linked as they are (with
        # another MPI's mpif.h constants): NPB's own clean first
        _make(["make", "clean"], top, log + ".clean.log")
        extra_f = extra_c = ""
        ks = os.path.join(top, "kernel_stats")
        if os.path.isdir(ks):
            for c in ("kernel_stats.c", "arg_parse.c"):
                _make(cc + ["-c", c], ks, log + ".kernel_stats.log")
            extra_f = " ../kernel_stats/kernel_stats.o ../kernel_stats/arg_parse.o"
            extra_c = " ../kernel_stats/kernel_stats.o"
        with open(os.path.join(top, "config", "make.def"), "w") as f:
            f.write(npb_make_def(" ".join(fc), " ".join(cc), extra_f, extra_c))
        for k in NPB_KERNELS:
            _make(["make", k, f"NPROCS={nprocs}", f"CLASS={klass}"], top, f"{log}.{k}.log")

    progs = [os.path.join("bin", f"{k}.{klass}.x") for k in NPB_KERNELS]
    top = _build_once(src, dest, impl, npb_check_tree(src),
                      {"fc": fc, "cc": cc, "class": klass, "nprocs": nprocs}, _absent(*progs),
                      build, f"NPB built with {fc[0]}", copy=(".git", "bin"))
    return os.path.join(top, "bin")


NPB_NAME = re.compile(r"^\s*(\w+) Benchmark Completed", re.M)
NPB_TIME = re.compile(r"^\s*Time in seconds\s*=\s*([0-9.eE+-]+)", re.M)
NPB_MOPS = re.compile(r"^\s*Mop/s total\s*=\s*([0-9.eE+-]+)", re.M)
NPB_VERIFY = re.compile(r"^\s*Verification\s*=\s*(\S+)", re.M)
# 3.4.1 and later: the ranks that computed (NPB_NPROCS_STRICT=off leaves the rest idle)
NPB_ACTIVE = re.compile(r"^\s*Active processes\s*=\s*(\d+)", re.M)


def parse_npb(text):
    """An NPB kernel's report as [{kernel, sec, mops}]; raises WrongAnswer unless it says
    `Verification = SUCCESSFUL`."""
    name, t = NPB_NAME.search(text), NPB_TIME.search(text)
    v, m = NPB_VERIFY.search(text), NPB_MOPS.search(text)
    if not name or not t:
        return []
    if not v or v.group(1) != "SUCCESSFUL":
        raise WrongAnswer(f"NPB {name.group(1)}: Verification = {v.group(1) if v else 'missing'}")
    act = NPB_ACTIVE.search(text)
    return [{"kernel": name.group(1).lower(), "sec": float(t.group(1)),
             "mops": float(m.group(1)) if m else 0.0,
             "active": int(act.group(1)) if act else None}]


# ---------------------------------------------------------------------------- LULESH

def lulesh_check_tree(src):
    for f in ("Makefile", "lulesh.cc", "lulesh-comm.cc", "lulesh.h"):
        if not os.path.exists(os.path.join(src, f)):
            return f"{src}: no {f}: not a LULESH 2.0 tree (github.com/LLNL/LULESH)"
    return None


def build_lulesh(src, dest, impl, cxx):
    """LULESH 2.0 from src with the C++ wrapper cxx, in a copy at dest/impl, as its Makefile
    says: `make MPICXX="WRAPPER -DUSE_MPI=1"` with the Makefile's own flags for a build without
    OpenMP (`-g -O3 -I. -Wall`: one thread per rank, as for HPL's BLAS).  Returns the program's
    path; kept while the source and the wrapper are the same."""

    def build(top, log):
        _make(["make", "clean"], top, log + ".clean.log")
        _make(["make", f"-j{os.cpu_count() or 1}", "MPICXX=" + " ".join(cxx) + " -DUSE_MPI=1",
               "CXXFLAGS=-g -O3 -I. -Wall", "LDFLAGS=-g -O3"], top, log + ".log")

    top = _build_once(src, dest, impl, lulesh_check_tree(src), {"cxx": cxx}, _absent("lulesh2.0"),
                      build, f"LULESH built with {cxx[0]}")
    return os.path.join(top, "lulesh2.0")


LULESH_SIZE = re.compile(r"^\s*Problem size\s*=\s*(\d+)", re.M)
LULESH_TASKS = re.compile(r"^\s*MPI tasks\s*=\s*(\d+)", re.M)
LULESH_TIME = re.compile(r"^Elapsed time\s*=\s*([0-9.eE+-]+)", re.M)
LULESH_FOM = re.compile(r"^FOM\s*=\s*([0-9.eE+-]+)", re.M)
LULESH_RELDIFF = re.compile(r"^\s*MaxRelDiff\s*=\s*([0-9.eE+-]+|nan|inf)", re.M | re.I)
# LULESH's own check: the energy of plane 0 is symmetric (rank 0 prints the largest relative
# difference); a correct run shows round-off only (about 1e-12 at these sizes)
LULESH_MAX_RELDIFF = 1e-8


def parse_lulesh(text):
    """LULESH's report as [{ranks, size, sec, fom}] (FOM: zones a second, higher is better);
    raises WrongAnswer when its symmetry check shows more than round-off."""
    t, f = LULESH_TIME.search(text), LULESH_FOM.search(text)
    n, s = LULESH_TASKS.search(text), LULESH_SIZE.search(text)
    if not t or not f or not n or not s:
        return []
    d = LULESH_RELDIFF.search(text)
    rel = float(d.group(1)) if d else float("nan")
    if not rel <= LULESH_MAX_RELDIFF:
        raise WrongAnswer(f"LULESH: MaxRelDiff = {d.group(1) if d else 'missing'} "
                          f"(more than {LULESH_MAX_RELDIFF})")
    return [{"ranks": int(n.group(1)), "size": int(s.group(1)), "sec": float(t.group(1)),
             "fom": float(f.group(1))}]
