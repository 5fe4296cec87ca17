#!/usr/bin/env bash
# extrapolate_real.sh PELAB: the extrapolation view with a real model (issue 22). `pelab eval
# --model stories260K.bin --extrapolate` writes position,loss,windows with the trained context at
# the end of its description line; the view reads one or several such tables (--data A,B): one curve per file named
# after the model and its scaling, the window counts not drawn, the training length 512 marked
# (not rows / 4), and its export's numbers equal the eval tables' loss column. The text is the
# model's own stories (pelab generate), so no corpus file is needed. TAP output.
. "$(dirname "$0")/tap_realmodels.sh" "$1"
tap_need_realmodels "the real model fixtures"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pelab-extra.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
m=$rm_dir/stories260K/stories260K.bin
t=$rm_dir/stories260K/tok512.bin
for s in 1 2 3 4 5 6; do
    "$pelab" generate --model "$m" --tokenizer "$t" --steps 400 --temperature 0.8 --seed $s
done > "$tmp/text.txt" 2> "$tmp/err"
[ -s "$tmp/text.txt" ]
ok $? "six stories of stories260K as the text ($(wc -w < "$tmp/text.txt") words)"
"$pelab" eval --model "$m" --tokenizer "$t" --text "$tmp/text.txt" --extrapolate --ctx 1024 \
    -o "$tmp/none.csv" 2> "$tmp/err" &&
    "$pelab" eval --model "$m" --tokenizer "$t" --text "$tmp/text.txt" --extrapolate --ctx 1024 \
        --scaling linear --factor 2 -o "$tmp/linear.csv" 2>> "$tmp/err"
ok $? "pelab eval --extrapolate, as trained and --scaling linear --factor 2 ($(head -c 200 "$tmp/err"))"
sed -n 2p "$tmp/none.csv" | grep -q ', trained context 512$'
ok $? "the table says the trained context: ..., trained context 512"
"$pelab" export extrapolation --data "$tmp/none.csv,$tmp/linear.csv" -o "$tmp/x.csv" 2> "$tmp/err"
ok $? "export extrapolation --data none.csv,linear.csv ($(head -c 200 "$tmp/err"))"
grep -q '^# (1+models, positions): row 0 = position; rows: loss of stories260K.bin stories260K.bin linear$' "$tmp/x.csv"
ok $? "two curves named stories260K.bin and stories260K.bin linear, no window counts ($(sed -n 3p "$tmp/x.csv"))"
# the export is (3, positions): row 1 = none.csv's loss, row 2 = linear.csv's, in position order
awk -F, -v a="$tmp/none.csv" -v b="$tmp/linear.csv" '
    FILENAME == a && /^[0-9]/ { want[1, $1] = $2; np++ }
    FILENAME == b && /^[0-9]/ { want[2, $1] = $2 }
    FILENAME != a && FILENAME != b && !/^#/ { r++; for (i = 1; i <= NF; i++) got[r - 1, i - 1] = $i; cols = NF }
    END {
        if (r != 3 || cols != np) { print "shape " r " x " cols " for " np " positions"; exit 1 }
        for (row = 1; row <= 2; row++)
            for (p = 0; p < np; p++) {
                d = got[row, p] - want[row, p]; if (d < 0) d = -d
                if (d > 1e-6 || got[0, p] != p) { print "row " row " position " p; exit 1 }
            }
    }' "$tmp/none.csv" "$tmp/linear.csv" "$tmp/x.csv" > "$tmp/awk" 2>&1
ok $? "the export's rows equal the eval tables' loss column at every position ($(cat "$tmp/awk"))"
"$pelab" export extrapolation --data "$tmp/none.csv" -o "$tmp/x.svg" 2> "$tmp/err" &&
    grep -q 'trained at context 512' "$tmp/x.svg"
ok $? "the figure marks the training length at 512 (not the rows / 4 of a 1023-row table)"
"$pelab" export extrapolation --data "$tmp/none.csv,$tmp/nothere.csv" -o "$tmp/y.csv" 2> "$tmp/err"
[ $? -ne 0 ] && grep -q 'nothere.csv' "$tmp/err" && [ "$(wc -l < "$tmp/err")" -eq 1 ]
ok $? "a missing second file: one line naming it ($(head -c 200 "$tmp/err"))"
echo "1..$n"
[ "$failed" -eq 0 ]
