"""adfbench: the pieces every benchmark script of mod_adaptive_deflate shares.

- pages cut from the corpus;
- server setups (off, mod_deflate N, mod_brotli N, this module adaptive or
  at a fixed level, nginx gzip N, ...) and the one place their httpd.conf /
  nginx.conf is written, with a choice of MPM settings;
- link topologies: two network namespaces joined by a veth pair (tbf rate,
  delay, loss, RPS steering) or the old single-namespace loopback with tbf;
- wrk runs whose results come back as JSON from a Lua done() hook;
- CPU accounting over a window: /proc/stat per CPU, /proc/softirqs, the
  server processes' utime/stime, ksoftirqd;
- a status poller for the module's /adf-status?json.

Everything that is started is stopped, and every namespace deleted, on the
way out (try/finally; SIGINT and SIGTERM raise, so the finally blocks run).
Names are prefixed "adfb" and carry the harness's pid, so two harnesses, or
a harness and anything else on the machine, never share a namespace or a
device.
"""

import atexit
import contextlib
import ctypes
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(TOP, "bench")
# The corpus: ADF_CORPUS, else ../shared/corpus beside the checkout, else
# the one t/gen-corpus writes into t/corpus (generated files, other names:
# corpus_file() picks).
CORPUS = os.environ.get("ADF_CORPUS", os.path.join(TOP, "..", "shared", "corpus"))
if not os.path.isdir(CORPUS):
    CORPUS = os.path.join(TOP, "t", "corpus")
    if not os.path.isdir(CORPUS):
        subprocess.run([os.path.join(TOP, "t", "gen-corpus"), CORPUS], check=True)
MODULE = os.environ.get("ADF_MODULE", os.path.join(TOP, ".libs", "mod_adaptive_deflate.so"))
PORT = int(os.environ.get("ADF_BENCH_PORT", "8611"))
# A log of the module's decisions (coding, level, reason per response) for
# diagnosis: it costs a write per response, so figures are not taken with it.
NOTES = os.environ.get("ADF_BENCH_NOTES")
NOTES_LOG = ('CustomLog "%s" "%%{adaptive_deflate_coding}n %%{adaptive_deflate_level}n '
             '%%{adaptive_deflate_reason}n"\n')
SERVER_CPU, CLIENT_CPU = 0, 1
# Niceness of servers, wrk and the delay line (--nice): on a shared
# machine a negative value keeps other people's jobs from taking the cores.
NICE = 0
USER_HZ = os.sysconf("SC_CLK_TCK")
PREFIX = "adfb"
BROWSER_AE = "gzip, deflate, br"


class HarnessError(RuntimeError):
    """A failure of the harness or its environment, with what to do."""


def moddir():
    out = subprocess.run(["apxs", "-q", "LIBEXECDIR"], capture_output=True, text=True)
    return out.stdout.strip() or "/usr/lib/apache2/modules"


def sh(cmd, what=None, quiet=False, **kw):
    """Run a command; on failure raise HarnessError with its stderr."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise HarnessError("%s failed (exit %d): %s\n%s" % (
            what or cmd[0], r.returncode, " ".join(cmd), (r.stderr or r.stdout).strip()))
    return r.stdout


def pinned(cpu):
    """Command prefix: pinned to a core, at NICE."""
    return (["nice", "-n", str(NICE)] if NICE else []) + ["taskset", "-c", str(cpu)]


def log(msg):
    print(msg, flush=True)


# ---- clean exit -------------------------------------------------------------

_cleanups = []


def on_exit(fn):
    """Run fn at exit (LIFO), also after SIGINT/SIGTERM; returns a handle
    for forget()."""
    _cleanups.append(fn)
    return fn


def forget(fn):
    if fn in _cleanups:
        _cleanups.remove(fn)


def _run_cleanups():
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - teardown goes on
            print("adfbench: cleanup: %s" % e, file=sys.stderr)


def _raise_on_signal(sig, frame):
    raise KeyboardInterrupt("signal %d" % sig)


def install_signal_handlers():
    """SIGTERM and SIGHUP become KeyboardInterrupt, so finally blocks run."""
    signal.signal(signal.SIGTERM, _raise_on_signal)
    signal.signal(signal.SIGHUP, _raise_on_signal)


atexit.register(_run_cleanups)


def check_environment(need_module=True):
    if os.geteuid() != 0:
        raise HarnessError("the harness needs root (network namespaces, tc, taskset)")
    if os.cpu_count() < 2:
        raise HarnessError("the harness needs 2 CPUs (server on CPU 0, client on CPU 1)")
    for tool in ("wrk", "ip", "tc", "taskset", "curl", "apache2", "iptables"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            raise HarnessError("%s is missing: run ADF_WITH_BENCH=1 scripts/install-deps" % tool)
    if need_module and not os.path.exists(MODULE):
        raise HarnessError("%s is missing: build the module first (scripts/build)" % MODULE)
    corpus_file("lcet10.txt", "book.txt")
    corpus_file("html", "page.html")


def pin_self(cpu=CLIENT_CPU):
    """The harness itself runs on the client's core: its polling and /proc
    reading never lands on the server's core."""
    os.sched_setaffinity(0, {cpu})


# ---- pages -------------------------------------------------------------------

def corpus_file(*names):
    """The first of names in CORPUS: the shared corpus's, then t/gen-corpus's."""
    for name in names:
        path = os.path.join(CORPUS, name)
        if os.path.exists(path):
            return path
    raise HarnessError("none of %s in %s (set ADF_CORPUS)" % (", ".join(names), CORPUS))


BOOK_HEAD = b"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Book</title></head><body><pre>\n"
BOOK_TAIL = b"\n</pre></body></html>\n"


def make_pages(docroot, sizes=(10, 25, 50, 75, 100, 170), static=True, big_mb=8):
    """book<N>.html: N KB of lcet10.txt wrapped in HTML; page.html (the
    corpus html page); static/ with precompressed siblings; plain.bin;
    big.bin (incompressible, for measuring a link's rate)."""
    os.makedirs(docroot, exist_ok=True)
    text = open(corpus_file("lcet10.txt", "book.txt"), "rb").read()
    for kb in sizes:
        n = kb * 1024 - len(BOOK_HEAD) - len(BOOK_TAIL)
        with open(os.path.join(docroot, "book%d.html" % kb), "wb") as f:
            f.write(BOOK_HEAD + text[:n] + BOOK_TAIL)
    shutil.copy(corpus_file("html", "page.html"), os.path.join(docroot, "page.html"))
    st = os.path.join(docroot, "static")
    if static:
        os.makedirs(st, exist_ok=True)
        shutil.copy(corpus_file("html", "page.html"), os.path.join(st, "page.html"))
    # Before the siblings: a chmod moves F's ctime, and a sibling stands
    # for F only while its mark names F's ctime (it would never be served).
    sh(["chmod", "-R", "a+rX", docroot])
    extra = []
    if static:
        tool = os.path.join(TOP, "tools", "adaptive-precompress")
        if not os.path.exists(tool):
            raise HarnessError("%s is missing: build first (scripts/build)" % tool)
        sh([tool, "-q", st], "adaptive-precompress")
        size = os.path.getsize(os.path.join(st, "page.html.gz"))
        # the siblings' size, at the docroot and beside them (the same
        # directory walk as theirs)
        extra += [("plain.bin", size), (os.path.join("static", "plain.bin"), size)]
    if big_mb:
        extra.append(("big.bin", big_mb << 20))
    for name, size in extra:
        with open(os.path.join(docroot, name), "wb") as f:
            f.write(os.urandom(size))
        os.chmod(os.path.join(docroot, name), 0o644)


# ---- setups ------------------------------------------------------------------

# MPM settings.  "bench": what the harness always used (few, fat children,
# so a closed loop of 64 connections never waits for a thread).  "debian":
# Debian's stock mpm_event.conf, plus apache2.conf's keep-alive defaults.
MPM_PROFILES = {
    "bench": """StartServers 2
ServerLimit 4
ThreadsPerChild 64
ThreadLimit 64
MaxRequestWorkers 256
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
""",
    "debian": """StartServers 2
MinSpareThreads 25
MaxSpareThreads 75
ThreadLimit 64
ThreadsPerChild 25
MaxRequestWorkers 150
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
""",
}

STATUS_LOCATION = """<Location "/adf-status">
    SetHandler adaptive-deflate-status
</Location>
"""


class Setup:
    """A named server configuration: kind 'httpd' or 'nginx', and the
    compression part of its configuration."""

    def __init__(self, name, kind, conf, adf=False, modules=()):
        self.name, self.kind, self.conf, self.adf = name, kind, conf, adf
        self.modules = list(modules)
        self.module = MODULE

    def __repr__(self):
        return "Setup(%s)" % self.name


def adf_conf(levels="1 9", br="1 6", extra="", source="auto", enc="gzip", zstd="1 12"):
    """This module with explicit ranges (the fixed-level setups)."""
    return """AdaptiveDeflate On
AdaptiveDeflateEncodings {enc}
AdaptiveDeflateGzipLevels {levels}
AdaptiveDeflateBrotliQualities {br}
AdaptiveDeflateZstdLevels {zstd}
AdaptiveDeflateSizeLevels none
AdaptiveDeflateLoadSource {source}
{extra}""".format(levels=levels, br=br, source=source, extra=extra, enc=enc, zstd=zstd)


SETUP_HELP = """off, deflate-N (mod_deflate level N), brotli-N (mod_brotli quality N),
adaptive (this module, default configuration: AdaptiveDeflate On only),
adaptive-MS (the same with AdaptiveDeflateLoadInterval MS ms),
adf-N (this module at fixed gzip level N), adfbr-N (fixed brotli quality N),
adfzstd-N (fixed zstd level N), target-N (the default configuration with
AdaptiveDeflateCPUTarget N; over 90 with AdaptiveDeflateCPULimit 99 97), adfoff (this module loaded, AdaptiveDeflate
Off), vary ("off" with mod_headers adding Vary: Accept-Encoding: the header
this module adds, without the module),
adfgoal (this module over its goal, under the limit: a load file reading
70 against a target of 10 %, so that nearly every response is decided on
the frontier and left out, "load"), adflimit (a load file reading 100:
every response decided over the CPU limit, "cpu-limit"), nginx-N (nginx gzip level N),
siblings, rewrite, nginx-static, plain;
any of them NAME@LABEL: with the module build in $ADF_MODULE_LABEL"""


def make_setup(name, work, status=False):
    """A Setup by name (see SETUP_HELP).  status: also serve /adf-status.
    NAME@LABEL: the same with the module build in $ADF_MODULE_LABEL (two
    builds compared in one run)."""
    if "@" in name:
        base, _, label = name.partition("@")
        path = os.environ.get("ADF_MODULE_" + label.upper())
        if not path or not os.path.exists(path):
            raise HarnessError("setup %s: set ADF_MODULE_%s to a build of the module" % (name, label.upper()))
        setup = make_setup(base, work, status)
        setup.name, setup.module = name, path
        return setup
    kind, _, num = name.rpartition("-")
    if not kind or not num.isdigit():
        kind, num = name, None
    fixed_load = "file:%s/zero-load" % work
    if not os.path.exists(os.path.join(work, "zero-load")):
        with open(os.path.join(work, "zero-load"), "w") as f:
            f.write("0\n")
    st = STATUS_LOCATION if status else ""
    if name in ("off", "plain"):
        return Setup(name, "httpd", "")
    if kind == "deflate":
        return Setup(name, "httpd", "SetOutputFilter DEFLATE\nDeflateCompressionLevel %s\n" % num,
                     modules=["deflate", "filter"])
    if kind == "brotli":
        return Setup(name, "httpd", "SetOutputFilter BROTLI_COMPRESS\nBrotliCompressionQuality %s\n" % num,
                     modules=["brotli", "filter"])
    if kind == "adf":
        return Setup(name, "httpd", adf_conf(levels="%s %s" % (num, num), source="none") + st, adf=True)
    if kind == "adfzstd":
        return Setup(name, "httpd", adf_conf(zstd="%s %s" % (num, num), source="none", enc="zstd") + st,
                     adf=True)
    if kind == "adfbr":
        return Setup(name, "httpd", adf_conf(br="%s %s" % (num, num), source="none", enc="br") + st,
                     adf=True)
    if name == "adaptive":
        return Setup(name, "httpd", "AdaptiveDeflate On\n" + st, adf=True)
    if name == "adfgoal":
        goal_load = os.path.join(work, "goal-load")
        with open(goal_load, "w") as f:
            f.write("70\n")
        return Setup(name, "httpd", "AdaptiveDeflate On\nAdaptiveDeflateCPUTarget 10\n"
                     "AdaptiveDeflateLoadSource file:%s\n" % goal_load + st, adf=True)
    if name == "adflimit":
        full_load = os.path.join(work, "full-load")
        with open(full_load, "w") as f:
            f.write("100\n")
        return Setup(name, "httpd", "AdaptiveDeflate On\nAdaptiveDeflateLoadSource file:%s\n" % full_load + st,
                     adf=True)
    if name == "adfoff":
        return Setup(name, "httpd", "AdaptiveDeflate Off\n" + st, adf=True)
    if name == "vary":
        return Setup(name, "httpd", "Header append Vary Accept-Encoding\n", modules=["headers"])
    if kind == "adaptive":
        return Setup(name, "httpd", "AdaptiveDeflate On\nAdaptiveDeflateLoadInterval %sms\n" % num + st,
                     adf=True)
    if kind == "target":
        # the default configuration with another CPU target; a target over
        # 90 gets the limit above it (99 97), so that the limit does not
        # cut in at the load the controller steers to
        lim = "AdaptiveDeflateCPULimit 99 97\n" if int(num) > 90 else ""
        return Setup(name, "httpd", "AdaptiveDeflate On\nAdaptiveDeflateCPUTarget %s\n%s" % (num, lim) + st,
                     adf=True)
    if kind == "nginx":
        return Setup(name, "nginx", "gzip on; gzip_comp_level %s; gzip_min_length 256; "
                     "gzip_types text/plain text/css; gzip_vary on;" % num)
    if name == "siblings":
        return Setup(name, "httpd", adf_conf(source=fixed_load, enc="br gzip")
                     + "AdaptiveDeflatePrecompressed On\n", adf=True)
    if name == "rewrite":
        return Setup(name, "httpd", """RewriteEngine On
RewriteCond "%{HTTP:Accept-Encoding}" "gzip"
RewriteCond "%{DOCUMENT_ROOT}%{REQUEST_URI}.gz" -s
RewriteRule "^(.*)\\.html" "$1.html.gz" [QSA]
<FilesMatch "\\.html\\.gz$">
    ForceType text/html
    Header append Content-Encoding gzip
    Header append Vary Accept-Encoding
</FilesMatch>
""", modules=["rewrite", "headers"])
    if name == "nginx-static":
        return Setup(name, "nginx", "gzip_static on; gzip_vary on;")
    raise HarnessError("unknown setup %r; setups: %s" % (name, SETUP_HELP))


def httpd_conf(setup, d, docroot, listen, mpm="event", profile="bench", h2=False,
               module=MODULE, extra=""):
    """The one httpd.conf writer: bench/run and bench/integrity both use it."""
    user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
    mods = ["mpm_" + mpm, "authz_core", "mime", "dir"] + setup.modules + (["http2"] if h2 else [])
    mods = list(dict.fromkeys(mods))
    md = moddir()
    load = "".join("LoadModule %s_module %s/mod_%s.so\n" % (m, md, m) for m in mods)
    if setup.adf:
        load += 'LoadModule adaptive_deflate_module "%s"\n' % module
    if profile not in MPM_PROFILES:
        raise HarnessError("unknown MPM profile %r (%s)" % (profile, ", ".join(MPM_PROFILES)))
    mpmconf = MPM_PROFILES[profile]
    if mpm == "prefork":        # no threads: one process per connection, prefork's own limits
        mpmconf = "\n".join(l for l in mpmconf.splitlines()
                             if "Thread" not in l and "ServerLimit" not in l) + "\n"
    return """ServerRoot "{d}"
ServerName localhost
Listen {listen}
PidFile "{d}/httpd.pid"
ErrorLog "{d}/error_log"
LogLevel warn
{user}{load}TypesConfig /etc/mime.types
# MPM profile: {profile}
{mpmconf}DocumentRoot "{root}"
<Directory "{root}">
    Require all granted
    AllowOverride None
</Directory>
LogFormat "%O" bytes
CustomLog "{d}/bytes_log" bytes
{notes}{h2}{conf}{extra}""".format(d=d, listen=listen, user=user, load=load, profile=profile,
                           mpmconf=mpmconf, root=docroot, conf=setup.conf, extra=extra,
                           h2="Protocols h2c http/1.1\n" if h2 else "",
                           notes=NOTES_LOG % NOTES if NOTES and setup.adf else "")


def nginx_conf(setup, d, docroot, listen, h2=False):
    return """worker_processes 1;
daemon on;
pid {d}/nginx.pid;
error_log {d}/error_log warn;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    log_format bytes '$bytes_sent';
    access_log {d}/bytes_log bytes;
    keepalive_requests 1000000;
    client_body_temp_path {d}/tmp;
    proxy_temp_path {d}/tmp;
    fastcgi_temp_path {d}/tmp;
    uwsgi_temp_path {d}/tmp;
    scgi_temp_path {d}/tmp;
    server {{
        listen {listen}{h2};
        root {root};
        {conf}
    }}
}}
""".format(d=d, listen=listen, root=docroot, conf=setup.conf, h2=" http2" if h2 else "")


class Server:
    """One running server of a Setup, inside a topology's server side,
    pinned to SERVER_CPU."""

    def __init__(self, setup, work, docroot, topo, port=None, mpm="event", profile="bench",
                 h2=False, extra="", cpu=SERVER_CPU):
        self.setup, self.work, self.docroot, self.topo = setup, work, docroot, topo
        self.cpu = cpu
        port = PORT if port is None else port
        self.port, self.mpm, self.profile, self.h2, self.extra = port, mpm, profile, h2, extra
        self.dir = tempfile.mkdtemp(prefix="srv-%s." % setup.name, dir=work)
        self.pidfile = None
        self._cleanup = None
        self._log_off = 0

    @property
    def url_base(self):
        return "http://%s:%d" % (self.topo.server_addr, self.port)

    def conf_path(self):
        return os.path.join(self.dir, "httpd.conf" if self.setup.kind == "httpd" else "nginx.conf")

    def write_conf(self):
        listen = "%s:%d" % (self.topo.server_addr, self.port)
        if self.setup.kind == "httpd":
            text = httpd_conf(self.setup, self.dir, self.docroot, listen, self.mpm, self.profile,
                              self.h2, module=self.setup.module, extra=self.extra)
        else:
            text = nginx_conf(self.setup, self.dir, self.docroot, listen, self.h2)
        with open(self.conf_path(), "w") as f:
            f.write(text)
        return self.conf_path()

    def start(self, path="/page.html", timeout=15):
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        sh(["chmod", "-R", "a+rwX", self.dir])
        conf = self.write_conf()
        pre = self.topo.server_cmd(pinned(self.cpu) if self.cpu is not None else [])
        if self.setup.kind == "httpd":
            self.pidfile = os.path.join(self.dir, "httpd.pid")
            cmd = pre + ["/usr/sbin/apache2", "-d", self.dir, "-f", conf, "-k", "start"]
        else:
            self.pidfile = os.path.join(self.dir, "nginx.pid")
            cmd = pre + ["nginx", "-c", conf, "-p", self.dir]
        self._cleanup = on_exit(self.stop)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise HarnessError("%s did not start: %s\n%s" % (self.setup.name, r.stderr.strip(),
                                                            self.error_log()))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(self.pidfile) and self.topo.http_ok(self.url_base + path):
                return self
            time.sleep(0.1)
        raise HarnessError("%s did not answer %s within %d s\n%s" % (
            self.setup.name, self.url_base + path, timeout, self.error_log()))

    def error_log(self):
        try:
            return open(os.path.join(self.dir, "error_log")).read()[-2000:]
        except OSError:
            return "(no error_log)"

    def parent(self):
        try:
            return int(open(self.pidfile).read().split()[0])
        except (OSError, ValueError, IndexError, TypeError):
            return None

    def pids(self):
        parent = self.parent()
        if parent is None:
            return []
        out = subprocess.run(["pgrep", "-P", str(parent)], capture_output=True, text=True).stdout
        return [parent] + [int(p) for p in out.split()]

    def cpu_ticks(self):
        """(utime, stime) in clock ticks of the server's processes, including
        children that exited and were reaped (the parent's cutime/cstime),
        so a window's delta stays right when the MPM replaces children."""
        ut = st = 0
        parent = self.parent()
        for pid in self.pids():
            try:
                f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ut += int(f[11])
            st += int(f[12])
            if pid == parent:
                ut += int(f[13])
                st += int(f[14])
        return ut, st

    def sched_ns(self):
        """(run, wait) in ns summed over every thread of the server's
        processes (/proc/PID/task/TID/schedstat: exact run time and time
        spent runnable but waiting for the CPU).  Threads that exit between
        two readings take their time with them (the "bench" MPM profile
        never replaces children)."""
        run = wait = 0
        for pid in self.pids():
            try:
                tids = os.listdir("/proc/%d/task" % pid)
            except OSError:
                continue
            for tid in tids:
                try:
                    f = open("/proc/%d/task/%s/schedstat" % (pid, tid)).read().split()
                except OSError:
                    continue
                run += int(f[0])
                wait += int(f[1])
        return run, wait

    def rss_kb(self):
        total = 0
        for pid in self.pids()[1:]:
            try:
                for line in open("/proc/%d/status" % pid):
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            except OSError:
                pass
        return total

    def mark_log(self):
        """Start of a window in the bytes log."""
        try:
            self._log_off = os.path.getsize(os.path.join(self.dir, "bytes_log"))
        except OSError:
            self._log_off = 0

    def mean_bytes(self):
        """Mean bytes per response (headers included) since mark_log()."""
        try:
            with open(os.path.join(self.dir, "bytes_log"), "rb") as f:
                f.seek(self._log_off)
                vals = [int(x) for x in f.read().split() if x.isdigit()]
        except OSError:
            return 0
        return sum(vals) / len(vals) if vals else 0

    def graceful(self):
        sh(self.topo.server_cmd(["/usr/sbin/apache2", "-d", self.dir, "-f", self.conf_path(),
                                 "-k", "graceful"]), "apache2 -k graceful")

    def stop(self, timeout=10):
        parent = self.parent()
        if parent is not None:
            try:
                os.kill(parent, signal.SIGTERM)
                deadline = time.time() + timeout
                while time.time() < deadline:
                    os.kill(parent, 0)
                    time.sleep(0.05)
                os.kill(parent, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self._cleanup:
            forget(self._cleanup)
            self._cleanup = None
        # the listening port must be free before the next server starts
        time.sleep(0.1)


@contextlib.contextmanager
def running(server, path="/page.html"):
    server.start(path)
    try:
        yield server
    finally:
        server.stop()


# ---- network namespaces and links ----------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


@contextlib.contextmanager
def in_netns(name):
    """Run the calling thread inside network namespace 'name' (sockets made
    inside stay there)."""
    if name is None:
        yield
        return
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/%s" % name, os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise HarnessError("setns(%s): %s" % (name, os.strerror(ctypes.get_errno())))
        try:
            yield
        finally:
            _libc.setns(own, CLONE_NEWNET)
    finally:
        os.close(own)
        os.close(target)


def parse_rate(rate):
    """'100mbit' -> bits per second (None for 'unlimited')."""
    if rate in (None, "", "unlimited"):
        return None
    r = rate.lower()
    for suf, mul in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3), ("bit", 1)):
        if r.endswith(suf):
            return int(float(r[:-len(suf)]) * mul)
    raise HarnessError("rate %r: use unlimited, NNkbit, NNmbit or NNgbit" % rate)


def tbf_args(rate, latency_ms=50):
    """tbf parameters for a rate: a bucket of 4 ms at the rate, at least
    128 KB, so GSO segments (up to 64 KB) pass whole instead of being cut
    up in software on the sender's core."""
    bps = parse_rate(rate)
    burst = max(128 * 1024, bps // 8 // 250)
    return ["tbf", "rate", rate, "burst", str(burst), "latency", "%dms" % latency_ms]


def have_qdisc(kind):
    """Whether this kernel has a qdisc (probed in a scratch namespace)."""
    ns = "%s-%d-probe" % (PREFIX, os.getpid())
    subprocess.run(["ip", "netns", "add", ns], capture_output=True)
    try:
        args = {"netem": ["netem", "delay", "1ms"]}.get(kind, [kind])
        r = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root"] + args,
                           capture_output=True)
        return r.returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def netns_pids(ns):
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def delete_netns(ns):
    """Delete a namespace of ours, ending the processes we left in it."""
    for pid in netns_pids(ns):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for _ in range(50):
        if not netns_pids(ns):
            break
        time.sleep(0.1)
    for pid in netns_pids(ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def reap_stale_namespaces():
    """Namespaces of an earlier harness run (adfb-PID-...) whose PID is gone
    and which hold no process: deleted.  Others are left alone."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        parts = name.split("-")
        if len(parts) < 3 or parts[0] != PREFIX or not parts[1].isdigit():
            continue
        pid = int(parts[1])
        if pid == os.getpid() or os.path.exists("/proc/%d" % pid):
            continue
        if netns_pids(name):
            log("adfbench: stale namespace %s still holds processes; left alone" % name)
            continue
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        log("adfbench: deleted stale namespace %s" % name)


class Topology:
    """Where the server and the client run and what joins them.

    kind "veth": namespaces <pfx>-srv and <pfx>-cli joined by a veth pair;
      tbf on the server side's egress for the rate; delay and loss (netem
      where the kernel has it, else an NFQUEUE delay line and iptables
      'statistic' drops in the client namespace, on the client's core);
      RPS steers the client side's receive work to CLIENT_CPU and the
      server side's to SERVER_CPU.
    kind "lo": the old topology, kept as the worst case: one namespace,
      server and client on its loopback, tbf on lo (both directions share
      the bucket; the receive path runs on whichever core sends or fires
      the tbf timer).
    kind "host": no namespace, 127.0.0.1 (integrity test, quick checks).
    """

    SERVER_ADDR = "169.254.86.1"    # link-local: cannot be routed off the veth pair
    CLIENT_ADDR = "169.254.86.2"

    def __init__(self, kind="veth", rate="unlimited", rtt_ms=0, loss_pct=0.0, delay="auto",
                 tbf_latency_ms=50, tag=""):
        if kind not in ("veth", "lo", "host"):
            raise HarnessError("topology %r: veth, lo or host" % kind)
        if kind != "veth" and (rtt_ms or loss_pct):
            raise HarnessError("delay and loss need the veth topology")
        if kind == "host" and rate != "unlimited":
            raise HarnessError("a rate limit needs a namespace topology (veth or lo)")
        parse_rate(rate)
        self.kind, self.rate, self.rtt_ms, self.loss_pct = kind, rate, rtt_ms, loss_pct
        self.tbf_latency_ms = tbf_latency_ms
        self.delay_backend = delay
        self.id = "%d%s" % (os.getpid(), tag)
        self.pfx = "%s-%s" % (PREFIX, self.id)
        self.server_ns = self.client_ns = None
        self.server_dev = self.client_dev = None
        self.server_addr = "127.0.0.1"
        self._delayer = None
        self._cleanup = None
        self.up_done = False

    def __str__(self):
        s = "%s %s" % (self.kind, self.rate)
        if self.rtt_ms:
            s += " rtt %gms" % self.rtt_ms
        if self.loss_pct:
            s += " loss %g%%" % self.loss_pct
        return s

    @property
    def label(self):
        s = "%s/%s" % (self.kind, self.rate)
        if self.rtt_ms:
            s += "/rtt%g" % self.rtt_ms
        if self.loss_pct:
            s += "/loss%g" % self.loss_pct
        return s

    # commands inside either side
    def server_cmd(self, cmd):
        return (["ip", "netns", "exec", self.server_ns] if self.server_ns else []) + cmd

    def client_cmd(self, cmd):
        return (["ip", "netns", "exec", self.client_ns] if self.client_ns else []) + cmd

    def http_ok(self, url):
        r = subprocess.run(self.client_cmd(["taskset", "-c", str(CLIENT_CPU), "curl", "-s", "-o",
                                            "/dev/null", "-m", "5", "-w", "%{http_code}", url]),
                           capture_output=True, text=True)
        return r.returncode == 0 and r.stdout.startswith(("2", "3"))

    def up(self):
        self._cleanup = on_exit(self.down)
        try:
            if self.kind == "lo":
                self._up_lo()
            elif self.kind == "veth":
                self._up_veth()
        except BaseException:
            self.down()
            raise
        self.up_done = True
        return self

    def _up_lo(self):
        ns = self.pfx + "-lo"
        sh(["ip", "netns", "add", ns], "ip netns add")
        self.server_ns = self.client_ns = ns
        OUR_NETNS.add(ns)
        sh(["ip", "-n", ns, "link", "set", "lo", "up"])
        self.server_dev = self.client_dev = "lo"
        if self.rate != "unlimited":
            sh(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root"]
               + tbf_args(self.rate, self.tbf_latency_ms), "tc tbf on lo")

    def _up_veth(self):
        srv, cli = self.pfx + "-srv", self.pfx + "-cli"
        sdev, cdev = ("%s%ss" % (PREFIX, self.id))[-15:], ("%s%sc" % (PREFIX, self.id))[-15:]
        sh(["ip", "netns", "add", srv], "ip netns add")
        self.server_ns = srv
        OUR_NETNS.add(srv)
        sh(["ip", "netns", "add", cli], "ip netns add")
        self.client_ns = cli
        OUR_NETNS.add(cli)
        sh(["ip", "link", "add", sdev, "netns", srv, "type", "veth", "peer", "name", cdev,
            "netns", cli], "ip link add veth")
        self.server_dev, self.client_dev = sdev, cdev
        self.server_addr = self.SERVER_ADDR
        for ns, dev, addr in ((srv, sdev, self.SERVER_ADDR), (cli, cdev, self.CLIENT_ADDR)):
            sh(["ip", "-n", ns, "addr", "add", addr + "/30", "dev", dev])
            sh(["ip", "-n", ns, "link", "set", "lo", "up"])
            sh(["ip", "-n", ns, "link", "set", dev, "up"])
        # RPS: each side's receive work on its own core.
        for ns, dev, cpu in ((srv, sdev, SERVER_CPU), (cli, cdev, CLIENT_CPU)):
            sh(["ip", "netns", "exec", ns, "sh", "-c", "echo %x > /sys/class/net/%s/queues/rx-0/rps_cpus"
                % (1 << cpu, dev)], "setting rps_cpus")
        backend = self.delay_backend
        if backend == "auto":
            backend = "netem" if (self.rtt_ms or self.loss_pct) and have_qdisc("netem") else "nfqueue"
        self.delay_backend = backend if (self.rtt_ms or self.loss_pct) else "none"
        half = self.rtt_ms / 2.0
        if backend == "netem" and (self.rtt_ms or self.loss_pct):
            # server egress: netem (delay RTT/2, loss) with tbf below it;
            # client egress: delay RTT/2.
            sh(["ip", "netns", "exec", srv, "tc", "qdisc", "add", "dev", sdev, "root", "handle", "1:",
                "netem", "delay", "%gms" % half] + (["loss", "%g%%" % self.loss_pct] if self.loss_pct else [])
               + ["limit", "100000"], "tc netem")
            if self.rate != "unlimited":
                sh(["ip", "netns", "exec", srv, "tc", "qdisc", "add", "dev", sdev, "parent", "1:",
                    "handle", "2:"] + tbf_args(self.rate, self.tbf_latency_ms), "tc tbf")
            if half:
                sh(["ip", "netns", "exec", cli, "tc", "qdisc", "add", "dev", cdev, "root", "netem",
                    "delay", "%gms" % half, "limit", "100000"], "tc netem")
        else:
            if self.rate != "unlimited":
                sh(["ip", "netns", "exec", srv, "tc", "qdisc", "add", "dev", sdev, "root"]
                   + tbf_args(self.rate, self.tbf_latency_ms), "tc tbf")
            if self.loss_pct:
                sh(["ip", "netns", "exec", cli, "iptables", "-t", "raw", "-A", "PREROUTING", "-i", cdev,
                    "-m", "statistic", "--mode", "random", "--probability", "%g" % (self.loss_pct / 100.0),
                    "-j", "DROP"], "iptables loss rule")
            if self.rtt_ms:
                self._start_delayer(cli, cdev, half)

    def _start_delayer(self, ns, dev, half_ms):
        exe = build_delayer()
        logf = open(os.path.join(tempfile.gettempdir(), "%s-delay.log" % self.pfx), "w")
        self._delayer = subprocess.Popen(
            ["ip", "netns", "exec", ns] + pinned(CLIENT_CPU) + ["chrt", "-f", "10", exe, "0",
             str(int(half_ms * 1000))], stdout=logf, stderr=subprocess.STDOUT)
        self._delayer_log = logf.name
        deadline = time.time() + 5
        while "nfq-delay: queue" not in open(logf.name).read():
            if self._delayer.poll() is not None or time.time() > deadline:
                raise HarnessError("nfq-delay did not start: %s" % open(logf.name).read())
            time.sleep(0.05)
        # the queue has its reader: now send both directions through it
        for chain, opt in (("PREROUTING", "-i"), ("OUTPUT", "-o")):
            sh(["ip", "netns", "exec", ns, "iptables", "-t", "raw", "-A", chain, opt, dev, "-j",
                "NFQUEUE", "--queue-num", "0"], "iptables NFQUEUE rule")

    def down(self):
        if self._delayer is not None:
            if self._delayer.poll() is None:
                self._delayer.send_signal(signal.SIGTERM)
                try:
                    self._delayer.wait(5)
                except subprocess.TimeoutExpired:
                    self._delayer.kill()
                    self._delayer.wait()
            self._delayer = None
        for ns in dict.fromkeys([self.server_ns, self.client_ns]):
            if ns:
                delete_netns(ns)
        self.server_ns = self.client_ns = None
        if self._cleanup:
            forget(self._cleanup)
            self._cleanup = None
        self.up_done = False

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    # facts
    def rps_cpus(self):
        """{'server': mask, 'client': mask} of the veth rx queues."""
        out = {}
        if self.kind != "veth":
            return out
        for side, ns, dev in (("server", self.server_ns, self.server_dev),
                              ("client", self.client_ns, self.client_dev)):
            out[side] = sh(["ip", "netns", "exec", ns, "cat",
                            "/sys/class/net/%s/queues/rx-0/rps_cpus" % dev]).strip()
        return out

    def qdisc_stats(self):
        """tc -s qdisc of the rate-limited device (text)."""
        if self.kind == "host":
            return ""
        return sh(["ip", "netns", "exec", self.server_ns, "tc", "-s", "qdisc", "show", "dev",
                   self.server_dev])

    def tx_bytes(self):
        """Bytes sent by the server side's device (veth) or lo."""
        if self.kind == "host":
            return 0
        return int(sh(["ip", "netns", "exec", self.server_ns, "cat",
                       "/sys/class/net/%s/statistics/tx_bytes" % self.server_dev]).strip())


_delayer_exe = None


def build_delayer():
    """Compile bench/nfq-delay.c once per run (needs libnetfilter-queue-dev)."""
    global _delayer_exe
    if _delayer_exe and os.path.exists(_delayer_exe):
        return _delayer_exe
    out = os.path.join(tempfile.mkdtemp(prefix="adfb-nfq."), "nfq-delay")
    sh(["cc", "-O2", "-Wall", "-o", out, os.path.join(BENCH, "nfq-delay.c"), "-lnetfilter_queue",
        "-lnfnetlink"], "building bench/nfq-delay.c (install libnetfilter-queue-dev: "
        "ADF_WITH_BENCH=1 scripts/install-deps)")
    on_exit(lambda: shutil.rmtree(os.path.dirname(out), ignore_errors=True))
    _delayer_exe = out
    return out


def measure_rtt(topo, n=15):
    """Median TCP connect time from the client namespace to the server port
    (SYN -> SYN-ACK), ms."""
    code = ("import socket,time,statistics,sys\n"
            "ts=[]\n"
            "for i in range(%d):\n"
            "    s=socket.socket(); t=time.perf_counter(); s.connect((sys.argv[1],int(sys.argv[2])))\n"
            "    ts.append((time.perf_counter()-t)*1000); s.close(); time.sleep(0.02)\n"
            "print(statistics.median(ts))\n" % n)
    out = sh(topo.client_cmd(["taskset", "-c", str(CLIENT_CPU), sys.executable, "-c", code,
                              topo.server_addr, str(PORT)]), "rtt probe")
    return float(out.strip())


# ---- wrk with a JSON done() hook -------------------------------------------------

WRK_LUA = r"""-- adfbench: wrk reports its results as JSON (file in ADFB_WRK_JSON).
local out = os.getenv("ADFB_WRK_JSON")
-- ADFB_THINK_MS: think time before each request (the first one too);
-- ADFB_THINK_SPREAD=s: drawn uniformly from think * [1 - s, 1 + s], so
-- that users do not stay in step (a fixed think time keeps every user's
-- request in the same burst, round after round).
local think = tonumber(os.getenv("ADFB_THINK_MS") or "")
local spread = tonumber(os.getenv("ADFB_THINK_SPREAD") or "") or 0
if think and think > 0 then
  math.randomseed(os.time())
  function delay()
    if spread > 0 then
      return think * (1 - spread + 2 * spread * math.random())
    end
    return think
  end
end
-- ADFB_MANY=N, ADFB_MANY_PREFIX=/dir/f: each request for PREFIX<1..N>.html
local many = tonumber(os.getenv("ADFB_MANY") or "")
if many and many > 0 then
  local prefix = os.getenv("ADFB_MANY_PREFIX")
  function request()
    return wrk.format(nil, prefix .. math.random(many) .. ".html")
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  local f = assert(io.open(out, "w"))
  f:write(string.format(
    '{"requests":%.0f,"bytes":%.0f,"duration_us":%.0f,' ..
    '"errors":{"connect":%.0f,"read":%.0f,"write":%.0f,"status":%.0f,"timeout":%.0f},' ..
    '"latency_us":{"min":%.0f,"mean":%.1f,"stdev":%.1f,"max":%.0f,' ..
    '"p50":%.0f,"p90":%.0f,"p99":%.0f,"p99.9":%.0f}}\n',
    summary.requests, summary.bytes, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9)))
  f:close()
end
"""

_lua_path = None


def wrk_lua():
    global _lua_path
    if not _lua_path:
        d = tempfile.mkdtemp(prefix="adfb-wrk.")
        os.chmod(d, 0o755)
        _lua_path = os.path.join(d, "json.lua")
        with open(_lua_path, "w") as f:
            f.write(WRK_LUA)
        on_exit(lambda: shutil.rmtree(d, ignore_errors=True))
    return _lua_path


WRK_COLUMNS = ["requests", "rps", "goodput_mbit", "wrk_bytes_per_resp", "errors", "non2xx", "p50_ms", "p90_ms",
               "p99_ms", "p999_ms", "max_ms"]


def wrk_row(j):
    """The JSON of one wrk run as flat CSV fields."""
    secs = j["duration_us"] / 1e6 or 1e-9
    e = j["errors"]
    lat = j["latency_us"]
    n = j["requests"]
    return {
        "requests": int(n),
        "rps": round(n / secs, 1),
        "goodput_mbit": round(j["bytes"] * 8 / secs / 1e6, 2),
        "wrk_bytes_per_resp": round(j["bytes"] / n) if n else "",
        "errors": int(e["connect"] + e["read"] + e["write"] + e["timeout"]),
        "non2xx": int(e["status"]),
        "p50_ms": round(lat["p50"] / 1000, 3),
        "p90_ms": round(lat["p90"] / 1000, 3),
        "p99_ms": round(lat["p99"] / 1000, 3),
        "p999_ms": round(lat["p99.9"] / 1000, 3),
        "max_ms": round(lat["max"] / 1000, 3),
    }


def wrk_cmd(topo, url, seconds, conns, threads=1, ae=BROWSER_AE, timeout_s=10):
    cmd = pinned(CLIENT_CPU) + ["wrk", "-t%d" % threads, "-c%d" % max(conns, threads),
           "-d%ds" % max(1, int(round(seconds))), "--timeout", "%ds" % timeout_s, "-s", wrk_lua()]
    if ae:
        cmd += ["-H", "Accept-Encoding: " + ae]
    return topo.client_cmd(cmd + [url])


# The spread of think times (0: fixed): see WRK_LUA; the ramp sets it.
THINK_SPREAD = 0.0


def wrk_env(json_path, think_ms):
    env = dict(os.environ, ADFB_WRK_JSON=json_path)
    if think_ms:
        env["ADFB_THINK_MS"] = str(think_ms)
        env["ADFB_THINK_SPREAD"] = str(THINK_SPREAD)
    return env


def run_wrk(topo, url, seconds, conns, threads=1, ae=BROWSER_AE, think_ms=None):
    """One closed-loop wrk run from the client side; the parsed JSON."""
    fd, path = tempfile.mkstemp(prefix="adfb-wrk.", suffix=".json")
    os.close(fd)
    os.chmod(path, 0o666)
    env = wrk_env(path, think_ms)
    try:
        r = subprocess.run(wrk_cmd(topo, url, seconds, conns, threads, ae), env=env,
                           capture_output=True, text=True, timeout=seconds + 60)
        if r.returncode != 0:
            raise HarnessError("wrk failed (exit %d): %s" % (r.returncode, r.stderr.strip()))
        try:
            return json.load(open(path))
        except ValueError as e:
            raise HarnessError("wrk's done() hook wrote no valid JSON (%s): %r\nwrk said: %s" % (
                e, open(path).read(), r.stdout + r.stderr))
    finally:
        os.unlink(path)


class WrkBackground:
    """wrk running while the caller does something else (spikes, ramps)."""

    def __init__(self, topo, url, seconds, conns, threads=1, ae=BROWSER_AE, think_ms=None):
        fd, self.path = tempfile.mkstemp(prefix="adfb-wrk.", suffix=".json")
        os.close(fd)
        os.chmod(self.path, 0o666)
        env = wrk_env(self.path, think_ms)
        self.proc = subprocess.Popen(wrk_cmd(topo, url, seconds, conns, threads, ae), env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._cleanup = on_exit(self.kill)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def result(self):
        self.proc.wait()
        forget(self._cleanup)
        try:
            return json.load(open(self.path))
        except ValueError:
            return None
        finally:
            os.unlink(self.path)


# ---- CPU accounting ------------------------------------------------------------------

STAT_FIELDS = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]


def read_proc_stat():
    """{cpu: [user, nice, system, idle, iowait, irq, softirq, steal]} in USER_HZ."""
    out = {}
    for line in open("/proc/stat"):
        if line.startswith("cpu") and line[3].isdigit():
            p = line.split()
            out[int(p[0][3:])] = [int(x) for x in p[1:9]]
    return out


def read_softirqs():
    """{name: [count per cpu]}"""
    lines = open("/proc/softirqs").read().splitlines()
    out = {}
    for line in lines[1:]:
        p = line.split()
        out[p[0].rstrip(":")] = [int(x) for x in p[1:]]
    return out


_ksoftirqd = {}


def ksoftirqd_ns():
    """{cpu: exact run time in ns of ksoftirqd/cpu}"""
    out = {}
    for cpu in (SERVER_CPU, CLIENT_CPU):
        if cpu not in _ksoftirqd:
            r = subprocess.run(["pgrep", "-x", "ksoftirqd/%d" % cpu], capture_output=True, text=True)
            _ksoftirqd[cpu] = r.stdout.split()[0] if r.stdout.split() else None
        try:
            out[cpu] = int(open("/proc/%s/schedstat" % _ksoftirqd[cpu]).read().split()[0])
        except (OSError, TypeError):
            pass
    return out


class CpuWindow:
    """CPU use over a measurement window.

    Per core (s_ = server core, c_ = client core), percent of the window:
    user, nice, system, irq, softirq, steal, idle (incl. iowait) from
    /proc/stat, and 'other' = the window minus all of them: on this kernel
    (tick-based accounting, no IRQ_TIME_ACCOUNTING, NO_HZ idle) idle is
    measured exactly but the busy fields are sampled at the tick, so short
    bursts of work on an otherwise idle core show up only there.
    proc_user / proc_sys: the server processes' utime/stime as percent of
    one core; without IRQ_TIME_ACCOUNTING, softirq work done while a server
    thread is on the CPU is charged to its stime.  NET_RX/NET_TX/TIMER:
    softirq invocations per second per core (/proc/softirqs).  ksoftirqd:
    the softirq threads' CPU, percent (exact, schedstat).  proc_run: the
    server threads' exact run time (schedstat), percent of one core;
    proc_wait: their summed time runnable but waiting for a CPU (can
    exceed 100 with many threads).  s_unexplained: s_busy - proc_run -
    s_ksoftirqd, i.e. other tasks on the server's core plus interrupt work
    done while it was idle: on a shared machine, the contamination.
    """

    def __init__(self, server=None):
        self.server = server

    def snap(self):
        return {
            "t": time.monotonic(),
            "stat": read_proc_stat(),
            "softirqs": read_softirqs(),
            "proc": self.server.cpu_ticks() if self.server else (0, 0),
            "sched": self.server.sched_ns() if self.server else (0, 0),
            "ksoft": ksoftirqd_ns(),
            "foreign": foreign_ticks(),
        }

    def start(self):
        self.a = self.snap()
        return self

    def stop(self):
        self.b = self.snap()
        return self.result()

    def result(self):
        a, b = self.a, self.b
        secs = b["t"] - a["t"]
        ticks = secs * USER_HZ
        r = {"window_s": round(secs, 3)}
        for pfx, cpu in (("s_", SERVER_CPU), ("c_", CLIENT_CPU)):
            d = [y - x for x, y in zip(a["stat"][cpu], b["stat"][cpu])]
            f = dict(zip(STAT_FIELDS, d))
            pct = lambda v: round(100.0 * v / ticks, 1)
            for k in ("user", "nice", "system", "irq", "softirq", "steal"):
                r[pfx + k] = pct(f[k])
            r[pfx + "idle"] = pct(f["idle"] + f["iowait"])
            r[pfx + "other"] = round(100.0 - sum(r[pfx + k] for k in
                                                 ("user", "nice", "system", "irq", "softirq", "steal",
                                                  "idle")), 1)
            r[pfx + "busy"] = round(100.0 - r[pfx + "idle"], 1)
            for name in ("NET_RX", "NET_TX", "TIMER", "HRTIMER"):
                if name in a["softirqs"]:
                    r[pfx + name.lower() + "_ps"] = round(
                        (b["softirqs"][name][cpu] - a["softirqs"][name][cpu]) / secs)
            if cpu in a["ksoft"] and cpu in b["ksoft"]:
                r[pfx + "ksoftirqd"] = round((b["ksoft"][cpu] - a["ksoft"][cpu]) / 1e7 / secs, 1)
        r["proc_user"] = round(100.0 * (b["proc"][0] - a["proc"][0]) / ticks, 1)
        r["proc_sys"] = round(100.0 * (b["proc"][1] - a["proc"][1]) / ticks, 1)
        r["proc_run"] = round((b["sched"][0] - a["sched"][0]) / 1e7 / secs, 1)
        r["proc_wait"] = round((b["sched"][1] - a["sched"][1]) / 1e7 / secs, 1)
        # The server core's busy time not spent in the server's threads or
        # ksoftirqd/N: other tasks on that core (other users of a shared
        # machine), plus interrupt and softirq work done while it was idle.
        r["s_unexplained"] = round(r["s_busy"] - r["proc_run"] - r.get("s_ksoftirqd", 0), 1)
        # Others' processes anywhere on the machine (either core), percent
        # of one core: a window over QUIET_MAX_PCT is not a measurement.
        r["foreign_pct"], r["foreign_top"] = foreign_use(a["foreign"], b["foreign"], secs)
        return r


CPU_COLUMNS = ["foreign_pct", "s_user", "s_system", "s_softirq", "s_irq", "s_steal", "s_idle", "s_other", "s_busy",
               "proc_user", "proc_sys", "proc_run", "proc_wait", "s_unexplained", "s_ksoftirqd", "s_net_rx_ps", "s_net_tx_ps",
               "c_user", "c_system", "c_softirq", "c_idle", "c_other", "c_busy", "c_ksoftirqd",
               "c_net_rx_ps", "c_net_tx_ps"]


def measure(server, topo, path, seconds, conns, threads=1, ae=BROWSER_AE, think_ms=None):
    """One measured wrk window: wrk's JSON, mean bytes per response from the
    server's log, and the CPU breakdown, as one flat dict."""
    server.mark_log()
    w = CpuWindow(server).start()
    j = run_wrk(topo, server.url_base + path, seconds, conns, threads, ae, think_ms)
    cpu = w.stop()
    row = wrk_row(j)
    row["bytes_per_resp"] = round(server.mean_bytes())
    row.update(cpu)
    row["cpu_ms_per_req"] = round((cpu["proc_user"] + cpu["proc_sys"]) * 10 * cpu["window_s"]
                                  / row["requests"], 4) if row["requests"] else ""
    return row


# ---- a quiet machine: waiting for one, and noticing others ----------------------------

# Set by bench/run (--quiet-*): before each measured cell the harness waits
# until the 1-minute load average is below QUIET_LOAD and no process of
# others has used CPU for QUIET_SECONDS; a window in which processes of
# others used more than QUIET_MAX_PCT of a core is marked (foreign_pct) and
# the run repeated.  QUIET_SECONDS 0: no waiting (the default; CI's smoke).
QUIET_LOAD = 0.5
QUIET_SECONDS = 0
QUIET_MAX_PCT = 3.0
QUIET_MAX_WAIT = 3 * 3600
OUR_NETNS = set()       # namespaces of this harness (their processes are ours)
PF_KTHREAD = 0x00200000


def _ns_inodes():
    out = set()
    for ns in list(OUR_NETNS):
        try:
            out.add(os.stat("/run/netns/%s" % ns).st_ino)
        except OSError:
            pass
    return out


def foreign_ticks():
    """{pid: (utime + stime in USER_HZ, comm)} of the processes that are not
    this harness's: not kernel threads (softirq work is the traffic's), not
    in one of its namespaces (servers, wrk, the delay line), not the harness
    or its direct children (ip, tc, taskset)."""
    me = os.getpid()
    ours = _ns_inodes()
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        if pid == me:
            continue
        try:
            with open("/proc/%d/stat" % pid) as f:
                st = f.read()
            comm = st[st.index("(") + 1:st.rindex(")")]
            f_ = st[st.rindex(")") + 2:].split()
            ppid, flags = int(f_[1]), int(f_[6])
            if flags & PF_KTHREAD or ppid == me or pid in (1, 2) or ppid == 2:
                continue
            if comm.startswith("memfd:"):
                continue        # the sandbox's own command runner
            if ours and os.stat("/proc/%d/ns/net" % pid).st_ino in ours:
                continue
            out[pid] = (int(f_[11]) + int(f_[12]), comm)
        except (OSError, ValueError, IndexError):
            continue
    return out


def foreign_use(a, b, secs):
    """Percent of one core that others' processes used between two
    foreign_ticks() snapshots, and the busiest of them."""
    used = {}
    for pid, (t, comm) in b.items():
        # a process that started in between: its whole life is in the window
        d = t - a[pid][0] if pid in a else t
        if d > 0:
            used[comm] = used.get(comm, 0) + d
    total = sum(used.values())
    top = sorted(used.items(), key=lambda kv: -kv[1])[:3]
    return (round(100.0 * total / USER_HZ / max(secs, 1e-3), 1),
            ",".join("%s:%.0f%%" % (c, 100.0 * v / USER_HZ / max(secs, 1e-3)) for c, v in top))


def loadavg1():
    return float(open("/proc/loadavg").read().split()[0])


def wait_quiet(what=""):
    """Block until the machine is quiet: load average below QUIET_LOAD and
    others' processes under QUIET_MAX_PCT / 3 of a core in every 2 s over
    QUIET_SECONDS.  Returns the seconds waited."""
    if not QUIET_SECONDS:
        return 0
    t0 = time.time()
    quiet_since = None
    last_log = 0
    prev, tprev = foreign_ticks(), time.monotonic()
    while True:
        time.sleep(2)
        cur, tcur = foreign_ticks(), time.monotonic()
        pct, top = foreign_use(prev, cur, tcur - tprev)
        prev, tprev = cur, tcur
        la = loadavg1()
        now = time.time()
        if la < QUIET_LOAD and pct <= QUIET_MAX_PCT / 3:
            quiet_since = quiet_since or now
            if now - quiet_since >= QUIET_SECONDS:
                waited = now - t0
                if waited > QUIET_SECONDS + 5:
                    log("  quiet: waited %s%s" % (fmt_eta(waited), " for " + what if what else ""))
                return waited
        else:
            quiet_since = None
            if now - last_log > 60:
                log("  waiting for a quiet machine%s: load %.2f, others %.1f%% (%s)" % (
                    " (" + what + ")" if what else "", la, pct, top))
                last_log = now
        if now - t0 > QUIET_MAX_WAIT:
            raise HarnessError("no quiet machine within %s" % fmt_eta(QUIET_MAX_WAIT))


# ---- status poller ------------------------------------------------------------------------

class StatusPoller(threading.Thread):
    """Polls /adf-status?json every interval from inside the client
    namespace (the harness runs on the client's core) and keeps
    (t, raw, smoothed, effort, limited, age_ms, poll_ms) rows.  age_ms is
    the age of the module's last load sample where the module reports it
    (load.age_ms), else empty."""

    def __init__(self, topo, server, interval=0.2, t0=None):
        super().__init__(daemon=True)
        self.topo, self.server, self.interval = topo, server, interval
        self.t0 = t0 or time.monotonic()
        self.rows = []
        self.errors = 0
        self.marks = {}
        self._halt = threading.Event()

    def mark(self, name):
        self.marks[name] = round(time.monotonic() - self.t0, 3)

    def run(self):
        import http.client
        with in_netns(self.topo.client_ns):
            conn = None
            nxt = time.monotonic()
            while not self._halt.is_set():
                t = time.monotonic()
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection(self.topo.server_addr, self.server.port,
                                                          timeout=2)
                    conn.request("GET", "/adf-status?json")
                    d = json.loads(conn.getresponse().read())
                    L = d["load"]
                    age = L.get("age_ms", "")
                    self.rows.append({"t": round(t - self.t0, 3), "raw": L.get("raw", ""),
                                      "smoothed": L.get("smoothed", ""), "effort": L.get("effort", ""),
                                      "limited": int(bool(L.get("limited"))),
                                      "age_ms": age if age is not None else "",
                                      "poll_ms": round((time.monotonic() - t) * 1000, 1)})
                except Exception:  # noqa: BLE001 - a missed poll is a gap, counted
                    self.errors += 1
                    if conn:
                        conn.close()
                    conn = None
                nxt += self.interval
                self._halt.wait(max(0, nxt - time.monotonic()))
            if conn:
                conn.close()

    def stop(self):
        self._halt.set()
        self.join(5)
        return self.rows


# ---- CPU burner -------------------------------------------------------------------------

class Burner:
    """A busy loop pinned to a core, for step experiments."""

    def __init__(self, cpu=SERVER_CPU):
        self.proc = subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
        self._cleanup = on_exit(self.stop)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        forget(self._cleanup)


# ---- small helpers ---------------------------------------------------------------------

def median(xs):
    xs = sorted(x for x in xs if x != "" and x is not None)
    if not xs:
        return ""
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


# TCP/IP headers on the wire: tbf meters 1514 bytes for each 1448 of
# payload (bench/run --only linkcheck measured the ratio, 0.956).
WIRE_PAYLOAD = 1448.0 / 1514.0


def link_capacity(rate):
    """HTTP bytes per second a link carries (None: unlimited)."""
    bps = parse_rate(rate)
    return bps / 8.0 * WIRE_PAYLOAD if bps else None


def link_as_measured(points, cells, link, busy_max=80.0, carried_min=0.5):
    """points {name: (cpu, bytes)} with each link-bound setting's bytes
    scaled to the link as it carried them: a setting that left the server's
    core under busy_max percent (the bound's own CPU share; cells[name]:
    its medians) and carried at least carried_min of the link was held by
    it, and what it delivered is the link's capacity for its responses
    (tbf with 64 connections carries less than its rate as responses grow:
    at 20 Mbit/s 0.99 of it with 4 KB responses, 0.82 with 34 KB ones).
    Returned so that best_mix's one link constraint, sum x_i b_i <= link,
    reads sum x_i b_i / carried_i <= 1."""
    if not link:
        return points
    out = {}
    for n, (c, b) in points.items():
        v = cells[n]
        carried = v["rps"] * b if v["rps"] != "" else 0
        if v["s_busy"] != "" and v["s_busy"] < busy_max \
                and carried_min * link <= carried < link:
            b = b * link / carried
        out[n] = (c, b)
    return out


def best_mix(points, cpu_share=0.8, link=None):
    """The best mix of fixed settings: points {name: (cpu, bytes)}, the core
    seconds and the bytes one response costs with that setting.  Maximises
    responses per second X = sum x_i subject to sum x_i cpu_i <= cpu_share
    (of one core) and sum x_i bytes_i <= link (bytes/s; None: no limit).
    A linear programme with two constraints: its optimum uses at most two
    settings, so every single one and every pair with both constraints
    binding is tried.  Returns (X, {name: share of the responses})."""
    best, mix = 0.0, {}
    names = [n for n, (c, b) in points.items() if c > 0 and b > 0]
    for n in names:
        c, b = points[n]
        x = cpu_share / c
        if link:
            x = min(x, link / b)
        if x > best:
            best, mix = x, {n: 1.0}
    if link:
        for i, n in enumerate(names):
            for m in names[i + 1:]:
                (c1, b1), (c2, b2) = points[n], points[m]
                det = c1 * b2 - c2 * b1
                if det == 0:
                    continue
                x1 = (cpu_share * b2 - c2 * link) / det
                x2 = (c1 * link - cpu_share * b1) / det
                if x1 >= 0 and x2 >= 0 and x1 + x2 > best:
                    best, mix = x1 + x2, {n: x1 / (x1 + x2), m: x2 / (x1 + x2)}
    return best, mix


def shuffled(seq, rng):
    seq = list(seq)
    rng.shuffle(seq)
    return seq


def fmt_eta(seconds):
    seconds = int(max(0, seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60) if seconds < 3600 else \
        "%d:%02d:%02d" % (seconds // 3600, seconds // 60 % 60, seconds % 60)


def workdir(prefix="adf-bench."):
    w = tempfile.mkdtemp(prefix=prefix)
    os.chmod(w, 0o755)
    on_exit(lambda: shutil.rmtree(w, ignore_errors=True))
    return w
