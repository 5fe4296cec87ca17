#!/usr/bin/env bash
# install.sh: `meson install --destdir` into a temporary folder, then the installed binary, with
# no PELAB_ASSETS and run from elsewhere, finds the installed assets (not the sources), exports a
# figure, draws a frame of the explorer (a built-in model's view, which reads assets/models) and
# has its man page and completions where man and the shells look. TAP.
set -u
pelab=$1
n=0 failed=0
ok() { # ok COND-EXIT-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$PELAB_BUILD" --destdir "$tmp/root" --no-rebuild --quiet >"$tmp/log" 2>&1
ok $? "meson install --destdir$( [ -s "$tmp/log" ] && sed 's/^/ # /' "$tmp/log" | head -5 | tr '\n' ' ')"
bin=$(find "$tmp/root" -path '*/bin/pelab' -type f | head -n1)
[ -x "$bin" ]; ok $? "the binary is installed (${bin#"$tmp/root"})"
for f in man1/pelab.1 completions/pelab.bash site-functions/_pelab vendor_completions.d/pelab.fish \
    pelab/models/rope.pelab pelab/configs/llama-3.1-8b.json; do
    [ -n "$(find "$tmp/root" -path "*/$f" -type f)" ]; ok $? "installed: $f"
done
cd "$tmp" || exit 1
unset PELAB_ASSETS
"$bin" list | grep -q "^assets (PELAB_ASSETS): $tmp/root/"; ok $? "the installed binary finds the installed assets"
"$bin" export heatmap -o x.png && [ -s x.png ]; ok $? "pelab export heatmap -o x.png"
"$bin" export attention --model rope --preset toy -o a.png && [ -s a.png ]
ok $? "pelab export attention (the shipped model from the installed assets)"
if command -v script >/dev/null; then
    TERM=xterm script -qec "$bin --frames 1" /dev/null >/dev/null 2>&1; ok $? "pelab --frames 1 draws a frame in a terminal"
    TERM=xterm script -qec "$bin --view attention --frames 1" /dev/null >/dev/null 2>&1
    ok $? "pelab --view attention --frames 1"
else
    n=$((n + 1)); echo "ok $n # SKIP script (util-linux) is not installed"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
