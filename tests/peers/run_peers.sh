#!/usr/bin/env bash
# run_peers.sh PELAB [ROUNDS [PART...]]: pelab against its peers on this machine, runs
# alternating, the median of ROUNDS (default 5) of each, and the ratios. PARTs: train, export,
# table (default all three). Not a test (nothing here is timed by the suite); the README's Speed
# section quotes what it printed. `run_peers.sh build/app/pelab 5 train` is the training ratio
# alone.
#   training   `pelab bench --only train` against tests/peers/train_torch.py (PyTorch on the CPU,
#              same shape and optimizer), 1 thread and 2; the PyTorch runs get
#              OPENBLAS_NUM_THREADS / OMP_NUM_THREADS equal to their thread count (with
#              torch.set_num_threads(1) alone OpenBLAS kept a second core busy)
#   .npy       `pelab export heatmap --dim 1024 --len 8192 -o F.npy` against numpy.save of the
#              same table, whole processes (Python's start-up included, as a user sees it)
#   .csv       the same at 2048 x 1024 against numpy.savetxt(fmt="%.9g")
#   table      8192 x 4096 float32 in process: `pelab bench --only table` against numpy
# Needs python3 with numpy and torch (Debian: python3-numpy python3-torch) and OpenBLAS as the
# system BLAS (libopenblas0-pthread): without it Debian's torch uses the reference BLAS, about
# 10x slower, which is no fair peer. PYTHON=... picks the interpreter; TORCH_STEPS=N the steps
# of each PyTorch run (40).
set -euo pipefail
pelab=${1:?usage: run_peers.sh PELAB [ROUNDS [train|export|table]...]}
rounds=${2:-5}
shift $(($# < 2 ? $# : 2))
parts=" ${*:-train export table} "
for p in $parts; do
    case $p in
    train | export | table) ;;
    *)
        echo "run_peers.sh: part '$p': expected train, export or table" >&2
        exit 2
        ;;
    esac
done
want() { [[ $parts == *" $1 "* ]]; }
steps=${TORCH_STEPS:-40}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-}
if [ -z "$py" ]; then
    for c in /usr/bin/python3 python3; do
        if command -v "$c" >/dev/null && "$c" -c 'import numpy, torch' 2>/dev/null; then
            py=$c
            break
        fi
    done
fi
if [ -z "$py" ] || ! "$py" -c 'import numpy, torch' 2>/dev/null; then
    echo "run_peers.sh: needs a python3 with numpy and torch (apt-get install python3-numpy" \
        "python3-torch libopenblas0-pthread, then /usr/bin/python3 has them)," \
        "or PYTHON=/path/to/python3" >&2
    exit 2
fi
blas=$(readlink -f "$(ldconfig -p | awk '/libblas\.so\.3 /{print $NF; exit}')" 2>/dev/null || true)
case "$blas" in
*openblas*) ;;
*)
    echo "run_peers.sh: the system BLAS is '${blas:-none}', not OpenBLAS: install" \
        "libopenblas0-pthread (torch on the reference BLAS is 10x slower, not a fair peer)" >&2
    exit 2
    ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
wall() { # wall seconds of one run of a command
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "scale=4; ($t1 - $t0) / 1000000000" | bc
}

echo "machine: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), $(nproc) CPUs;" \
    "$(date -u +%Y-%m-%d); $rounds rounds, alternating; load now: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/p1" >"$tmp/p2" >"$tmp/t1" >"$tmp/t2" >"$tmp/pc1" >"$tmp/tc1" >"$tmp/tb1"
# pelab: "training, --threads N: X tokens/s, G GFLOP/s; per CPU second Y tokens, ..."
# torch: "torch V threads N: X tokens/s (Y per CPU second, S steps, Z CPUs busy)"
field() { # field PATTERN 1|2|3: X, Y or Z of the line matching PATTERN
    awk -v want="$1" -v k="$2" '$0 ~ want { for (i = 1; i <= NF; i++) {
        if (k == 1 && ($i == "tokens/s" || $i == "tokens/s,")) { print $(i - 1); exit }
        if (k == 2 && $i == "second") { print $(i + 1); exit }
        if (k == 2 && $i == "tokens/s") { print substr($(i + 1), 2); exit }
        if (k == 3 && $i == "CPUs") { print $(i - 1); exit } } }'
}
torch() { # torch THREADS: one PyTorch run held to THREADS threads
    OPENBLAS_NUM_THREADS=$1 OMP_NUM_THREADS=$1 MKL_NUM_THREADS=$1 \
        "$py" "$here/train_torch.py" --threads "$1" --steps "$steps"
}
if want train; then
    for ((r = 0; r < rounds; r++)); do
        out=$("$pelab" bench --only train)
        echo "$out" | field "--threads 1:" 1 >>"$tmp/p1"
        echo "$out" | field "--threads 1:" 2 >>"$tmp/pc1"
        echo "$out" | field "--threads 2:" 1 >>"$tmp/p2"
        out=$(torch 1)
        echo "$out" | field "threads 1:" 1 >>"$tmp/t1"
        echo "$out" | field "threads 1:" 2 >>"$tmp/tc1"
        echo "$out" | field "threads 1:" 3 >>"$tmp/tb1"
        torch 2 | field "threads 2:" 1 >>"$tmp/t2"
    done
    p1=$(median <"$tmp/p1") p2=$(median <"$tmp/p2") t1=$(median <"$tmp/t1")
    t2=$(median <"$tmp/t2") pc1=$(median <"$tmp/pc1") tc1=$(median <"$tmp/tc1")
    printf "training tokens/s, 1 thread:  pelab %8.0f  torch %8.0f  pelab/torch %.2f" "$p1" "$t1" \
        "$(echo "$p1 / $t1" | bc -l)"
    printf "  (torch kept %s CPUs busy)\n" "$(median <"$tmp/tb1")"
    printf "training tokens/s, 2 threads: pelab %8.0f  torch %8.0f  pelab/torch %.2f\n" "$p2" \
        "$t2" "$(echo "$p2 / $t2" | bc -l)"
    printf "training tokens per CPU second, 1 thread: pelab %8.0f  torch %8.0f  pelab/torch %.2f\n" \
        "$pc1" "$tc1" "$(echo "$pc1 / $tc1" | bc -l)"
    echo "  1-thread ratio of each round (pelab/torch): $(paste -d/ "$tmp/p1" "$tmp/t1" |
        while IFS=/ read -r a b; do printf "%.2f " "$(echo "$a / $b" | bc -l)"; done)"
fi

if want export; then
    : >"$tmp/pn" >"$tmp/nn" >"$tmp/pc" >"$tmp/nc"
    for ((r = 0; r < rounds; r++)); do
        wall "$pelab" export heatmap --dim 1024 --len 8192 -o "$tmp/p.npy" >>"$tmp/pn"
        wall "$py" "$here/table_numpy.py" save 8192 1024 "$tmp/n.npy" >>"$tmp/nn"
        wall "$pelab" export heatmap --dim 1024 --len 2048 -o "$tmp/p.csv" >>"$tmp/pc"
        wall "$py" "$here/table_numpy.py" savetxt 2048 1024 "$tmp/n.csv" >>"$tmp/nc"
    done
    pn=$(median <"$tmp/pn") nn=$(median <"$tmp/nn") pc=$(median <"$tmp/pc") nc=$(median <"$tmp/nc")
    printf ".npy 8192x1024, whole process: pelab %.3f s  numpy.save %.3f s  pelab/numpy %.2f\n" \
        "$pn" "$nn" "$(echo "$pn / $nn" | bc -l)"
    printf ".csv 2048x1024, whole process: pelab %.3f s  numpy.savetxt %.3f s  pelab/numpy %.2f\n" \
        "$pc" "$nc" "$(echo "$pc / $nc" | bc -l)"
fi

if want table; then
    : >"$tmp/pt" >"$tmp/nt"
    for ((r = 0; r < rounds; r++)); do
        "$pelab" bench --quick --only table |
            awk '/d=4096/{for(i=1;i<=NF;i++) if($i=="ms,") {print $(i-1); exit}}' >>"$tmp/pt"
        "$py" "$here/table_numpy.py" table 8192 4096 | awk '{print $(NF-1)}' >>"$tmp/nt"
    done
    pt=$(median <"$tmp/pt") nt=$(median <"$tmp/nt")
    printf "table 8192x4096 float32, in process: pelab %.1f ms  numpy %.1f ms  pelab/numpy %.2f\n" \
        "$pt" "$nt" "$(echo "$pt / $nt" | bc -l)"
fi
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
