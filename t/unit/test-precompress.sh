#!/bin/sh
# adaptive-precompress: siblings decode to their files, carry their mtime,
# are skipped when up to date, rewritten when stale, never half-written,
# and orphans go only when asked.
set -u
tool=${builddir:-.}/tools/adaptive-precompress
corpus=${ADF_CORPUS:-${srcdir:-.}/../shared/corpus}
d=$(mktemp -d /tmp/adf-pc.XXXXXX)
trap 'chmod -R u+w "$d"; rm -rf "$d"' EXIT
pass=0
fail=0
check() {
    if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

mkdir -p "$d/site/sub" "$d/site/link"
cp "$corpus/html" "$d/site/index.html"
cp "$corpus/alice29.txt" "$d/site/sub/alice.txt"
cp "$corpus/fireworks.jpeg" "$d/site/photo.jpeg"
head -c 2000 /dev/urandom > "$d/site/random.txt"      # does not shrink
printf 'tiny' > "$d/site/tiny.css"
ln -s ../index.html "$d/site/link/index.html"
mkfifo "$d/site/fifo.js"

out=$("$tool" "$d/site")
check "first run exits 0" "[ $? -eq 0 ]"
check "summary" "echo \"\$out\" | grep -q '^3 files: 4 siblings written, 0 up to date, 2 not smaller'"
check "gz decodes" "gzip -dc '$d/site/index.html.gz' | cmp -s - '$d/site/index.html'"
check "br decodes" "brotli -dc '$d/site/sub/alice.txt.br' | cmp -s - '$d/site/sub/alice.txt'"
check "gz level 9 (XFL 2)" "[ \"\$(od -An -tu1 -j8 -N1 '$d/site/index.html.gz' | tr -d ' ')\" = 2 ]"
check "sibling carries the file's mtime" "[ \"\$(stat -c %Y '$d/site/index.html.gz')\" = \"\$(stat -c %Y '$d/site/index.html')\" ]"
check "jpeg skipped" "[ ! -e '$d/site/photo.jpeg.gz' ]"
check "short file skipped" "[ ! -e '$d/site/tiny.css.gz' ]"
check "incompressible: no sibling" "[ ! -e '$d/site/random.txt.gz' ] && [ ! -e '$d/site/random.txt.br' ]"
check "symlink not followed" "[ ! -e '$d/site/link/index.html.gz' ]"
check "fifo skipped" "[ ! -e '$d/site/fifo.js.gz' ]"
check "no temporary left" "[ -z \"\$(find '$d/site' -name '*.tmp-*')\" ]"

ino=$(stat -c %i "$d/site/index.html.gz")
out=$("$tool" "$d/site")
check "second run: all up to date" "echo \"\$out\" | grep -q '0 siblings written, 4 up to date'"
check "up-to-date sibling untouched" "[ \"\$(stat -c %i '$d/site/index.html.gz')\" = $ino ]"

sleep 1
echo "<p>changed</p>" >> "$d/site/index.html"
out=$("$tool" -q "$d/site")
check "stale sibling rewritten" "gzip -dc '$d/site/index.html.gz' | cmp -s - '$d/site/index.html'"
check "stale br rewritten" "brotli -dc '$d/site/index.html.br' | cmp -s - '$d/site/index.html'"

rm "$d/site/sub/alice.txt"
"$tool" -q "$d/site"
check "orphans kept without -d" "[ -e '$d/site/sub/alice.txt.gz' ]"
out=$("$tool" -d "$d/site")
check "orphans removed with -d" "[ ! -e '$d/site/sub/alice.txt.gz' ] && [ ! -e '$d/site/sub/alice.txt.br' ]"
check "summary counts orphans" "echo \"\$out\" | grep -q '2 orphans removed'"

# A directory it cannot write to: an error, and no partial sibling.
if [ "$(id -u)" != 0 ]; then
    mkdir "$d/ro"; cp "$corpus/html" "$d/ro/page.html"; chmod a-w "$d/ro"
    "$tool" -q "$d/ro" 2>/dev/null
    check "unwritable: exit 1" "[ $? -eq 1 ]"
    check "unwritable: nothing written" "[ -z \"\$(ls '$d/ro' | grep -v '^page.html$')\" ]"
fi
"$tool" --min-length=abc "$d/site" 2>/dev/null
check "bad option refused" "[ $? -eq 2 ]"
"$tool" -c deflate "$d/site" 2>/dev/null
check "bad coding refused" "[ $? -eq 2 ]"

echo "precompress: $pass passed, $fail failed"
[ $fail -eq 0 ]
