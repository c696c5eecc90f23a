#!/usr/bin/python3
"""Dictionary transport (dcz, RFC 9842) with a real browser: Debian's
chromium, headless, driven by chromedriver through selenium, against the
system's /usr/sbin/apache2 with the module just built.  TAP on stdout;
the logs go to stderr when a check fails.  scripts/test-browser installs
what it needs and runs it; t/README says how to run it alone.

  A1  a script replaced in place (/static/app.js): v1 is kept by the
      cache's worker and advertised, chromium registers it; v2 is
      deployed over it; once v1's response is stale chromium revalidates
      it in the background (stale-while-revalidate) naming v1 in
      Available-Dictionary: the server answers dcz against v1, and the
      next load runs v2.
  A2  a hashed name (/static/app.1a2b3c4d.js -> /static/app.5e6f7a8b.js,
      the old file removed, the page naming the new one): the reload
      asks for the new name with the old version as the dictionary; dcz;
      v2 runs.
  A3  a hashed name with precompressed siblings (adaptive-precompress's
      .br/.gz, AdaptiveDeflatePrecompressed On): the sibling goes out
      with Use-As-Dictionary, chromium registers it; the next build (its
      siblings too) is answered as dcz against it; v2 runs.
  B   a dynamic page (the suite's t/htdocs/dyn/page.cgi) on another
      origin (http://localhost:PORT) with AdaptiveDeflateDictionary: the
      first navigation gets a Link to the dictionary, chromium fetches
      it; the second navigation is dcz and its DOM is the page's.

Environment: ADF_MODULE (default: .libs/mod_adaptive_deflate.so of the
tree), ADF_BROWSER_PORT (default: the first free port from 8931),
ADF_KEEP=1 (keep the scratch directory and print its path).
"""
import base64
import errno
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE = os.environ.get('ADF_MODULE') or os.path.join(TOP, '.libs', 'mod_adaptive_deflate.so')
PRECOMPRESS = os.path.join(TOP, 'tools', 'adaptive-precompress')
HTTPD = '/usr/sbin/apache2'
CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
MODDIR = '/usr/lib/apache2/modules'
DEADLINE = 300          # seconds for the whole run

n = 0
failed = 0
dump_logs = False       # set by a failure: the logs go to stderr at the end


def check(what, ok, why=''):
    global n, failed, dump_logs
    n += 1
    print('%s %d - browser: %s' % ('ok' if ok else 'not ok', n, what), flush=True)
    if not ok:
        failed += 1
        dump_logs = True
        if why:
            for line in str(why).splitlines():
                print('# ' + line, flush=True)
    return ok


def diag(text):
    for line in str(text).splitlines():
        print('# ' + line, flush=True)


def wait_for(fn, timeout, interval=0.5):
    """fn() until it returns something true, for at most timeout seconds."""
    end = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() >= end:
            return v
        time.sleep(interval)


def free_port():
    want = os.environ.get('ADF_BROWSER_PORT')
    for p in ([int(want)] if want else range(8931, 8999)):
        if bindable(socket.AF_INET, '127.0.0.1', p) and bindable(socket.AF_INET6, '::1', p):
            return p
    return None


def bindable(family, addr, port):
    """Nobody listens there: chromium may try http://localhost:PORT at ::1
    before 127.0.0.1, so ::1 must not be someone else's either (a host
    without ::1 is fine)."""
    try:
        s = socket.socket(family)
    except OSError:
        return True
    try:
        s.bind((addr, port))
        return True
    except OSError as e:
        return e.errno != errno.EADDRINUSE
    finally:
        s.close()


def sf_hash(data):
    """Available-Dictionary as chromium sends it: sf-binary of the SHA-256."""
    return ':' + base64.b64encode(hashlib.sha256(data).digest()).decode() + ':'


def js(text, seed, edits=()):
    """A script of some 300 KB (functions made up from SEED) whose last
    statement writes TEXT into #v.  Two versions of one script: the same
    seed, a few functions (EDITS) changed, another TEXT."""
    r = random.Random(seed)
    words = ['alpha', 'beta', 'gamma', 'delta', 'render', 'update', 'state', 'props',
             'index', 'value', 'list', 'node', 'child', 'parent', 'event', 'handler',
             'queue', 'flush', 'commit', 'effect']
    out = ["(function(){'use strict';\n"]
    size = 0
    i = 0
    while size < 300000:
        a, b, c = r.choice(words), r.choice(words), r.choice(words)
        k = r.randint(0, 99999) + (7 if i in edits else 0)
        f = ('function %s_%s_%d(p_%s,q_%s){var x=%d;if(p_%s>x){return q_%s.%s(p_%s+%d)}'
             'for(var k=0;k<q_%s.length;k++){x+=q_%s[k]|0}return x^%d}\n'
             % (a, b, i, a, c, k, a, c, b, a, k % 97, c, c, k * 3))
        out.append(f)
        size += len(f)
        i += 1
    out.append("document.getElementById('v').textContent='%s';})();\n" % text)
    return ''.join(out)


PAGE = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s</title>'
        '<link rel="icon" href="data:,"></head>\n'
        '<body><p id="v">no script ran</p><script src="%s"></script></body></html>\n')


class Server:
    def __init__(self, work, port):
        self.work = work
        self.port = port
        self.conf = os.path.join(work, 'httpd.conf')
        self.log = os.path.join(work, 'logs', 'access_log')
        self.error_log = os.path.join(work, 'logs', 'error_log')
        self.pid = None

    def write_conf(self):
        w = self.work
        user = 'User nobody\nGroup nogroup\n' if os.getuid() == 0 else ''
        fields = [('vhost', '%v'), ('req', '%r'), ('status', '%>s'), ('bytes', '%B'),
                  ('ce', '%{Content-Encoding}o'),
                  ('coding', '%{adaptive_deflate_coding}n'),
                  ('dictionary', '%{adaptive_deflate_dictionary}n'),
                  ('cache', '%{adaptive_deflate_cache}n'),
                  ('uad', '%{Use-As-Dictionary}o'), ('link', '%{Link}o'),
                  ('ad', '%{Available-Dictionary}i'), ('ae', '%{Accept-Encoding}i'),
                  ('dest', '%{Sec-Fetch-Dest}i'), ('mode', '%{Sec-Fetch-Mode}i'),
                  ('site', '%{Sec-Fetch-Site}i'), ('cc', '%{Cache-Control}i'),
                  ('ua', '%{User-Agent}i')]
        fmt = ' '.join('%s=\\"%s\\"' % f for f in fields)
        mods = ''.join('LoadModule %s_module %s/mod_%s.so\n' % (m, MODDIR, m)
                       for m in ('mpm_event', 'authz_core', 'mime', 'dir', 'headers', 'cgid'))
        conf = f'''# scripts/test-browser's server (t/browser/dcz.py)
ServerRoot "{w}"
ServerName 127.0.0.1
Listen 127.0.0.1:{self.port}
PidFile "{w}/logs/httpd.pid"
ScriptSock "{w}/logs/cgid.sock"
{mods}LoadModule adaptive_deflate_module "{MODULE}"
TypesConfig /etc/mime.types
{user}ErrorLog "{w}/logs/error_log"
LogLevel info adaptive_deflate:trace1
LogFormat "{fmt}" browser
CustomLog "{w}/logs/access_log" browser
DirectoryIndex index.html
<Directory />
    Require all granted
</Directory>

AdaptiveDeflate On
# "1": an idle server, so the cache's worker makes the entries at once.
AdaptiveDeflateLoadSource file:{w}/load
AdaptiveDeflateCache "{w}/cache" 64M

# A1 and A2 (http://127.0.0.1:{self.port}/): versions of static files.
DocumentRoot "{w}/htdocs"
<Directory "{w}/htdocs">
    Header set Cache-Control "no-cache" "expr=%{{CONTENT_TYPE}} =~ m#^text/html#"
</Directory>
<Directory "{w}/htdocs/static">
    AdaptiveDeflateDictionaryVersions On
    AddType text/javascript .js
    # replaced in place: a short lifetime, and a long stale-while-revalidate
    # (chromium keeps a dictionary for the response's max-age plus its
    # stale-while-revalidate)
    Header set Cache-Control "max-age=3, stale-while-revalidate=86400"
    # a hashed name never changes
    <FilesMatch "\\.[0-9a-f]{{8}}\\.js$">
        Header set Cache-Control "max-age=31536000, immutable"
    </FilesMatch>
</Directory>

# A3: a build that precompresses (adaptive-precompress's siblings).
<Directory "{w}/htdocs/pre">
    AdaptiveDeflateDictionaryVersions On
    AdaptiveDeflatePrecompressed On
    AddType text/javascript .js
    Header set Cache-Control "max-age=31536000, immutable"
</Directory>

# B (http://localhost:{self.port}/): a dictionary for dynamic pages.
<VirtualHost 127.0.0.1:{self.port}>
    ServerName 127.0.0.1
</VirtualHost>
<VirtualHost 127.0.0.1:{self.port}>
    ServerName localhost
    DocumentRoot "{w}/htdocs-dyn"
    AdaptiveDeflateDictionary /dictionaries/site.dict "{w}/htdocs-dyn/dict/site.dict" match=/dyn/* max-age=3600
    <Directory "{w}/htdocs-dyn/dyn">
        Options +ExecCGI
        AddHandler cgi-script .cgi
    </Directory>
</VirtualHost>
'''
        with open(self.conf, 'w') as f:
            f.write(conf)

    def start(self):
        t = subprocess.run([HTTPD, '-f', self.conf, '-t'], capture_output=True, text=True)
        if t.returncode != 0:
            return 'apache2 -t: ' + t.stdout + t.stderr
        s = subprocess.run([HTTPD, '-f', self.conf, '-k', 'start'], capture_output=True, text=True)
        if s.returncode != 0:
            return 'apache2 -k start: ' + s.stdout + s.stderr
        pidfile = os.path.join(self.work, 'logs', 'httpd.pid')
        if not wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(), 10):
            return 'no pid file'
        self.pid = int(open(pidfile).read())
        if not wait_for(lambda: self.get('/index.html', {})[0] == 200, 10):
            return 'no answer on port %d' % self.port
        return ''

    def alive(self):
        try:
            os.kill(self.pid, 0)
            return True
        except (OSError, TypeError):
            return False

    def stop(self):
        if not self.pid:
            return True
        subprocess.run([HTTPD, '-f', self.conf, '-k', 'stop'], capture_output=True)
        if not wait_for(lambda: not self.alive(), 15, 0.2):
            os.kill(self.pid, signal.SIGKILL)
            wait_for(lambda: not self.alive(), 5, 0.2)
            return False
        return True

    def get(self, path, headers, host=None):
        req = urllib.request.Request('http://127.0.0.1:%d%s' % (self.port, path), headers=headers)
        if host:
            req.add_header('Host', host)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.headers, r.read()
        except Exception as e:      # noqa: BLE001 - any failure is "not yet"
            return 0, {}, str(e).encode()

    def kept(self, path):
        """Fetch PATH (br) until the cache's worker has kept it: the
        response carries Use-As-Dictionary (the worker keeps a version
        at its next tick, once its file is settled).  Returns its value
        or None."""
        def once():
            st, h, _ = self.get(path, {'Accept-Encoding': 'br'})
            return st == 200 and h.get('Use-As-Dictionary')
        return wait_for(once, 40, 1) or None

    def lines(self):
        out = []
        try:
            with open(self.log, errors='replace') as f:
                for line in f:
                    out.append(dict((k, v.replace('\\"', '"'))
                                    for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line)))
        except OSError:
            pass
        return out

    def find(self, start, pred):
        """The first log line from START that PRED accepts, as (index,
        fields), or None.  httpd logs a request once its response is
        sent: chromium may have run the script before the line is
        there, so for up to 5 s the log is read again."""
        found = []

        def once():
            for i, r in enumerate(self.lines()[start:]):
                if pred(r):
                    found.append((start + i, r))
                    return True
            return False
        return found[0] if wait_for(once, 5, 0.1) else None

    def mark(self):
        return len(self.lines())


def path_of(r):
    parts = r.get('req', '').split(' ')
    return parts[1] if len(parts) > 1 else ''


def main():
    def on_alarm(*_):
        raise TimeoutError('the run took more than %d s' % DEADLINE)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(DEADLINE)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda sig, _: sys.exit(128 + sig))

    t0 = time.time()
    work = tempfile.mkdtemp(prefix='adf-browser.')
    os.chmod(work, 0o755)
    server = None
    driver = None
    service = None
    sent, extra, console = [], {}, []
    try:
        # ---- the build, the tools ------------------------------------------------
        conf_h = os.path.join(os.path.dirname(os.path.dirname(MODULE)), 'config.h')
        zstd = os.path.exists(conf_h) and '#define ADF_HAVE_ZSTD 1' in open(conf_h).read()
        if not check('the module is built with zstd (dcz) (%s)' % conf_h, zstd):
            return
        for prog in (HTTPD, CHROMIUM, CHROMEDRIVER):
            if not check('%s is installed' % prog, os.access(prog, os.X_OK)):
                return
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
        except ImportError as e:
            check('python3-selenium is installed', False, e)
            return

        # ---- the files ----------------------------------------------------------------
        def put(rel, data, mode=0o644):
            p = os.path.join(work, rel)
            os.makedirs(os.path.dirname(p), mode=0o755, exist_ok=True)
            with open(p, 'wb') as f:
                f.write(data if isinstance(data, bytes) else data.encode())
            os.chmod(p, mode)
            return p

        a1 = js('v1', 1).encode()
        a2 = js('v2', 1, (10, 700, 1500)).encode()
        h1 = js('h1', 2).encode()
        h2 = js('h2', 2, (20, 900)).encode()
        put('htdocs/index.html', PAGE % ('in place', '/static/app.js'))
        put('htdocs/static/app.js', a1)
        put('htdocs/hashed.html', PAGE % ('hashed', '/static/app.1a2b3c4d.js'))
        put('htdocs/static/app.1a2b3c4d.js', h1)
        p1 = js('p1', 3).encode()
        p2 = js('p2', 3, (30, 800)).encode()
        put('htdocs/pre.html', PAGE % ('precompressed', '/pre/app.9a8b7c6d.js'))
        put('htdocs/pre/app.9a8b7c6d.js', p1)

        def precompress():
            return subprocess.run([PRECOMPRESS, '-q', '-d', os.path.join(work, 'htdocs/pre')],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode == 0
        if not check('adaptive-precompress writes the siblings of /pre (%s)' % PRECOMPRESS,
                     precompress()):
            return
        site = open(os.path.join(TOP, 't/htdocs/dict/site.dict'), 'rb').read()
        put('htdocs-dyn/dict/site.dict', site)
        put('htdocs-dyn/dyn/page.cgi', open(os.path.join(TOP, 't/htdocs/dyn/page.cgi'), 'rb').read(), 0o755)
        # what the template loads
        put('htdocs-dyn/static/app.js', "document.documentElement.dataset.app = 'ran';\n")
        put('htdocs-dyn/static/site.css', 'body { margin: 0 }\n')
        put('htdocs-dyn/favicon.ico', b'')
        put('load', '1\n')
        os.makedirs(os.path.join(work, 'logs'), mode=0o755)
        os.mkdir(os.path.join(work, 'cache'), 0o700)
        if os.getuid() == 0:
            import pwd
            nobody = pwd.getpwnam('nobody')
            os.chown(os.path.join(work, 'cache'), nobody.pw_uid, nobody.pw_gid)

        # ---- the server -------------------------------------------------------------
        for attempt in range(3):     # a port taken between the look and the start
            port = free_port()
            if port is None:
                check('a free port (%s)' % (os.environ.get('ADF_BROWSER_PORT') or '8931-8998'), False)
                return
            server = Server(work, port)
            server.write_conf()
            why = server.start()
            if 'Address already in use' not in why or os.environ.get('ADF_BROWSER_PORT'):
                break
        if not check('apache2 starts with the module on 127.0.0.1:%d' % server.port, not why, why):
            return
        base = 'http://127.0.0.1:%d' % server.port
        dyn = 'http://localhost:%d' % server.port

        # ---- the browser ------------------------------------------------------------
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for a in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                  '--no-first-run', '--disable-background-networking', '--disable-component-update',
                  '--disable-sync', '--user-data-dir=' + os.path.join(work, 'profile')):
            opts.add_argument(a)
        opts.set_capability('goog:loggingPrefs', {'performance': 'ALL', 'browser': 'ALL'})
        service = Service(CHROMEDRIVER, log_path=os.path.join(work, 'logs', 'chromedriver.log'))
        try:
            driver = webdriver.Chrome(service=service, options=opts)
        except Exception as e:      # noqa: BLE001
            check('chromium starts (headless, through chromedriver)', False, e)
            return
        driver.set_page_load_timeout(30)
        version = driver.capabilities.get('browserVersion', '?')
        check('chromium %s starts (headless, through chromedriver)' % version, True)
        # sent: the requests chromium sent, (id, url); extra: id -> the
        # headers it sent, as on the wire; console: its console messages

        def drain():
            for e in driver.get_log('performance'):
                m = json.loads(e['message'])['message']
                p = m.get('params', {})
                if m['method'] == 'Network.requestWillBeSent':
                    sent.append((p['requestId'], p['request']['url']))
                elif m['method'] == 'Network.requestWillBeSentExtraInfo':
                    extra[p['requestId']] = p.get('headers', {})
            console.extend(driver.get_log('browser'))

        def load(url):
            driver.get(url)
            drain()
            return driver.find_element(By.ID, 'v').text if driver.find_elements(By.ID, 'v') else None

        def headers_sent(url):
            """What chromium sent for URL, last time (its own view)."""
            for rid, u in reversed(sent):
                if u == url:
                    return extra.get(rid, {})
            return {}

        def dcz_line(start, path, vhost):
            return server.find(start, lambda r: path_of(r) == path and r.get('vhost') == vhost
                               and 'Chrome' in r.get('ua', ''))

        def report(what, r):
            diag('%s: Accept-Encoding: %s; Available-Dictionary: %s; Sec-Fetch-Dest/Mode/Site: '
                 '%s/%s/%s -> %s %s, %s bytes, dictionary %s'
                 % (what, r.get('ae'), r.get('ad'), r.get('dest'), r.get('mode'), r.get('site'),
                    r.get('status'), r.get('ce'), r.get('bytes'), r.get('dictionary')))

        # ---- A1: replaced in place -------------------------------------------------
        uad = server.kept('/static/app.js')
        check('A1: the server keeps v1 of /static/app.js and advertises it (%s)' % uad,
              uad == 'match="/static/app.js"')
        m = server.mark()
        v = load(base + '/index.html')
        got = server.find(m, lambda r: path_of(r) == '/static/app.js' and 'Chrome' in r.get('ua', ''))
        first = got[1] if got else {}
        check('A1: chromium runs v1 (%s), sent with Use-As-Dictionary (%s, %s bytes)'
              % (v, first.get('ce'), first.get('bytes')),
              v == 'v1' and first.get('uad') == 'match="/static/app.js"')
        # deploy v2 over it; v1's response (max-age=3) goes stale
        put('htdocs/static/app.js', a2)
        time.sleep(4)
        m = server.mark()
        v_stale = load(base + '/index.html')
        got = wait_for(lambda: dcz_line(m, '/static/app.js', '127.0.0.1'), 15)
        r = got[1] if got else {}
        report('A1 revalidation', r)
        check('A1: v2 deployed in place, the stale v1 runs once (%s) while chromium revalidates '
              'it naming v1 (Available-Dictionary %s, Accept-Encoding %s)'
              % (v_stale, r.get('ad'), r.get('ae')),
              v_stale == 'v1' and r.get('ad') == sf_hash(a1) and 'dcz' in r.get('ae', '').split(', '),
              'v1 is %s' % sf_hash(a1))
        check('A1: the server answers dcz against v1 (coding %s, dictionary %s)'
              % (r.get('coding'), r.get('dictionary')),
              r.get('ce') == 'dcz' and r.get('coding') == 'dcz' and r.get('dictionary') == 'hit')
        ok = r.get('bytes', '-').isdigit() and first.get('bytes', '-').isdigit() \
            and int(r['bytes']) * 20 < int(first['bytes'])
        check('A1: v2 as dcz is %s bytes, v1 as %s was %s' % (r.get('bytes'), first.get('ce'),
                                                             first.get('bytes')), ok)
        wait_for(lambda: load(base + '/index.html') == 'v2', 10, 1)
        v = driver.find_element(By.ID, 'v').text
        check('A1: the next load runs v2 (%s)' % v, v == 'v2')

        # ---- A2: a hashed name --------------------------------------------------------
        uad = server.kept('/static/app.1a2b3c4d.js')
        check('A2: the server keeps /static/app.1a2b3c4d.js and advertises it (%s)' % uad,
              uad == 'match="/static/app.*.js"')
        m = server.mark()
        v = load(base + '/hashed.html')
        got = server.find(m, lambda r: path_of(r) == '/static/app.1a2b3c4d.js' and 'Chrome' in r.get('ua', ''))
        first = got[1] if got else {}
        check('A2: chromium runs it (%s), sent with Use-As-Dictionary (%s, %s bytes)'
              % (v, first.get('ce'), first.get('bytes')),
              v == 'h1' and first.get('uad') == 'match="/static/app.*.js"')
        # the deploy: the new name, the page naming it, the old file gone
        put('htdocs/static/app.5e6f7a8b.js', h2)
        put('htdocs/hashed.html', PAGE % ('hashed', '/static/app.5e6f7a8b.js'))
        os.unlink(os.path.join(work, 'htdocs/static/app.1a2b3c4d.js'))
        m = server.mark()
        v = load(base + '/hashed.html')
        got = dcz_line(m, '/static/app.5e6f7a8b.js', '127.0.0.1')
        r = got[1] if got else {}
        report('A2 new name', r)
        check('A2: the reload asks for /static/app.5e6f7a8b.js naming the old version '
              '(Available-Dictionary %s, Accept-Encoding %s)' % (r.get('ad'), r.get('ae')),
              r.get('ad') == sf_hash(h1) and 'dcz' in r.get('ae', '').split(', '),
              'the old version is %s' % sf_hash(h1))
        check('A2: the server answers dcz against it (coding %s, dictionary %s), the old file gone'
              % (r.get('coding'), r.get('dictionary')),
              r.get('ce') == 'dcz' and r.get('coding') == 'dcz' and r.get('dictionary') == 'hit')
        ok = r.get('bytes', '-').isdigit() and first.get('bytes', '-').isdigit() \
            and int(r['bytes']) * 20 < int(first['bytes'])
        check('A2: the new version as dcz is %s bytes, the old one as %s was %s'
              % (r.get('bytes'), first.get('ce'), first.get('bytes')), ok)
        check('A2: and it runs: v2 (%s)' % v, v == 'h2')

        # ---- A3: a hashed name with siblings ------------------------------------------
        uad = server.kept('/pre/app.9a8b7c6d.js')
        check('A3: the server keeps /pre/app.9a8b7c6d.js, which has siblings, and advertises '
              'it (%s)' % uad, uad == 'match="/pre/app.*.js"')
        m = server.mark()
        v = load(base + '/pre.html')
        got = server.find(m, lambda r: path_of(r) == '/pre/app.9a8b7c6d.js' and 'Chrome' in r.get('ua', ''))
        first = got[1] if got else {}
        sib = os.path.getsize(os.path.join(work, 'htdocs/pre/app.9a8b7c6d.js.br'))
        check('A3: chromium runs it (%s), its br sibling (%s, %s bytes; the sibling has %d) '
              'sent with Use-As-Dictionary (%s)'
              % (v, first.get('ce'), first.get('bytes'), sib, first.get('uad')),
              v == 'p1' and first.get('ce') == 'br' and first.get('bytes') == str(sib)
              and first.get('uad') == 'match="/pre/app.*.js"')
        # the next build: its name, its siblings, the page naming it
        put('htdocs/pre/app.1f2e3d4c.js', p2)
        os.unlink(os.path.join(work, 'htdocs/pre/app.9a8b7c6d.js'))
        precompress()
        put('htdocs/pre.html', PAGE % ('precompressed', '/pre/app.1f2e3d4c.js'))
        m = server.mark()
        v = load(base + '/pre.html')
        got = dcz_line(m, '/pre/app.1f2e3d4c.js', '127.0.0.1')
        r = got[1] if got else {}
        report('A3 next build', r)
        check('A3: the next build, siblings and all, is answered dcz against it (Available-'
              'Dictionary %s, coding %s, dictionary %s, %s bytes against br\'s %s)'
              % (r.get('ad'), r.get('coding'), r.get('dictionary'), r.get('bytes'),
                 first.get('bytes')),
              r.get('ad') == sf_hash(p1) and r.get('ce') == 'dcz'
              and r.get('dictionary') == 'hit' and r.get('bytes', '-').isdigit()
              and int(r['bytes']) * 20 < sib, 'the old version is %s' % sf_hash(p1))
        check('A3: and it runs: v2 (%s)' % v, v == 'p2')

        # ---- B: a dynamic page, a configured dictionary -------------------------------
        m = server.mark()
        driver.get(dyn + '/dyn/page.cgi?a=first')
        drain()
        got = server.find(m, lambda r: path_of(r) == '/dyn/page.cgi?a=first')
        r = first = got[1] if got else {}
        title = [e.text for e in driver.find_elements(By.CSS_SELECTOR, 'h2.product-title')]
        check('B: the first page (%s, %d products, %s) links to the dictionary (%s)'
              % (title[0] if title else '-', len(title), r.get('ce'), r.get('link')),
              title[:1] == ['Product 1 (first)'] and len(title) == 40
              and r.get('link') == '</dictionaries/site.dict>; rel="compression-dictionary"')
        got = wait_for(lambda: server.find(m, lambda r: path_of(r) == '/dictionaries/site.dict'), 15)
        r = got[1] if got else {}
        check('B: chromium fetches the dictionary (%s, %s, Sec-Fetch-Mode %s, Use-As-Dictionary %s)'
              % (r.get('status'), r.get('ce'), r.get('mode'), r.get('uad')),
              r.get('status') == '200' and r.get('uad') == 'match="/dyn/*"')
        # registered once fetched; a navigation that raced it gets the usual
        # coding: a few tries, each a page of its own
        r = {}
        title = []
        for i, q in enumerate(('second', 'third', 'fourth')):
            time.sleep(1)
            m = server.mark()
            driver.get(dyn + '/dyn/page.cgi?a=' + q)
            drain()
            got = server.find(m, lambda r: path_of(r) == '/dyn/page.cgi?a=' + q)
            r = got[1] if got else {}
            title = [e.text for e in driver.find_elements(By.CSS_SELECTOR, 'h2.product-title')]
            if r.get('ce') == 'dcz':
                break
        report('B navigation %d' % (i + 2), r)
        check('B: navigation %d names the dictionary (Available-Dictionary %s, Sec-Fetch-Dest %s)'
              % (i + 2, r.get('ad'), r.get('dest')), r.get('ad') == sf_hash(site),
              'the dictionary is %s' % sf_hash(site))
        check('B: the server answers dcz (coding %s, dictionary %s, %s bytes; the first page '
              'as %s was %s)' % (r.get('coding'), r.get('dictionary'), r.get('bytes'),
                                 first.get('ce'), first.get('bytes')),
              r.get('ce') == 'dcz' and r.get('dictionary') == 'hit')
        check('B: the page chromium shows is the page (%s, %d products)'
              % (title[0] if title else '-', len(title)),
              title[:1] == ['Product 1 (%s)' % q] and len(title) == 40)

        # ---- what chromium said ---------------------------------------------------------
        errors = [e for e in console if e.get('level') == 'SEVERE']
        check('no errors in chromium\'s console (%d)' % len(errors), not errors,
              '\n'.join(e.get('message', '') for e in errors))
        h = headers_sent(base + '/static/app.5e6f7a8b.js')
        diag('chromium sent for the new hashed name: ' + ', '.join(
            '%s: %s' % (k, v) for k, v in sorted(h.items())
            if k.lower() in ('accept-encoding', 'available-dictionary', 'sec-fetch-dest',
                             'sec-fetch-mode', 'sec-fetch-site')))
    except Exception as e:      # noqa: BLE001 - a failure like any other
        check('the run completes (%s: %s)' % (type(e).__name__, e), False)
    finally:
        signal.alarm(0)
        if driver is not None:
            try:
                driver.quit()
            except Exception:   # noqa: BLE001
                pass
        if service is not None and service.process and service.process.poll() is None:
            service.process.kill()
        # a chromium left behind (one that chromedriver lost): ours by its profile
        prof = os.path.join(work, 'profile')
        for pid in os.listdir('/proc'):
            try:
                if pid.isdigit() and prof.encode() in open('/proc/%s/cmdline' % pid, 'rb').read():
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        if dump_logs and sent:
            sys.stderr.write('==== what chromium sent (its performance log)\n')
            for rid, u in sent:
                h = extra.get(rid, {})
                sys.stderr.write('%s %s\n' % (u, ', '.join(
                    '%s: %s' % (k, v) for k, v in sorted(h.items())
                    if k.lower() in ('accept-encoding', 'available-dictionary', 'cache-control',
                                     'sec-fetch-dest', 'sec-fetch-mode', 'if-none-match'))))
            for e in console:
                sys.stderr.write('console: %s\n' % e)
        if server is not None:
            if dump_logs:
                for f in (server.log, server.error_log,
                          os.path.join(work, 'logs', 'chromedriver.log')):
                    sys.stderr.write('==== %s\n' % f)
                    try:
                        text = open(f, errors='replace').read()
                        sys.stderr.write(text[-20000:] if f.endswith('chromedriver.log') else text)
                    except OSError as e:
                        sys.stderr.write('%s\n' % e)
            check('apache2 stops', server.stop())
        if os.environ.get('ADF_KEEP') == '1':
            diag('kept ' + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
        diag('%.0f s' % (time.time() - t0))
    return


if __name__ == '__main__':
    try:
        main()
    finally:
        print('1..%d' % n)
    sys.exit(1 if failed or n == 0 else 0)
