#!/usr/bin/env bash
# pelab.sh: set up, build and run pelab on Debian/Ubuntu.
#   ./pelab.sh [pelab arguments]   install what is missing, build, start pelab (the explorer)
#   ./pelab.sh test                the same set-up, then every test in a normal build and in an
#                                  ASan+UBSan build, the threaded ones under TSan, the fuzzers;
#                                  the last line is "N passed, N failed"
set -euo pipefail
cd "$(dirname "$0")"

deps=(gcc meson ninja-build pkg-config libncurses-dev libsdl2-dev libcairo2-dev libpng-dev
      libcjson-dev libgif-dev libimagequant-dev libwebp-dev libpcre2-dev fonts-dejavu-core)
# clang and its runtimes (libclang-rt-14-dev holds libFuzzer's) build tests/fuzz; rsvg-convert
# (librsvg2-bin) renders the SVGs the figure tests compare; python3-sentencepiece is the peer the
# tokenizer tests check Llama 2's tokenizer against
test_deps=(tmux xvfb clang-format poppler-utils librsvg2-bin zsh fish groff-base clang
           libclang-rt-14-dev python3-sentencepiece)

install_missing() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    echo "pelab.sh: installing ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >&2
}

build() { # build DIR [meson options...]
    local dir=$1
    shift
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >&2
    fi
    # PELAB_TARGETS: build only these (the fuzz build needs its harnesses, not everything)
    ninja -C "$dir" ${PELAB_TARGETS:-} >&2
}

if [ "${1:-}" = "test" ]; then
    shift
    install_missing "${deps[@]}" "${test_deps[@]}"
    passed=0 failed=0 skipped=0
    run_suite() { # run_suite DIR [meson options...]
        local dir=$1
        shift
        if ! build "$dir" "$@"; then
            echo "pelab.sh: the build in $dir failed" >&2
            failed=$((failed + 1))
            return
        fi
        local log
        log=$(mktemp)
        local only=()
        [ -n "${PELAB_SUITE:-}" ] && only=(--suite "$PELAB_SUITE" --no-rebuild)
        meson test -C "$dir" "${only[@]}" --print-errorlogs --num-processes 2 2>&1 |
            tee "$log" || true
        local ok fail
        ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
        fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
        local to sk
        to=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
        sk=$(sed -n 's/^Skipped: *\([0-9]*\).*/\1/p' "$log" | tail -n1)
        skipped=$((skipped + ${sk:-0}))
        [ -z "$ok" ] && fail=$((${fail:-0} + 1))
        passed=$((passed + ${ok:-0}))
        failed=$((failed + ${fail:-0} + ${to:-0}))
        rm -f "$log"
    }
    # the normal build: warnings are errors
    run_suite build-test -Dwerror=true -Dbuildtype=release
    # the same suite under AddressSanitizer and UndefinedBehaviorSanitizer
    ASAN_OPTIONS=detect_leaks=1 run_suite build-asan -Dwerror=true -Dbuildtype=debugoptimized \
        -Db_sanitize=address,undefined -Db_lundef=false
    # the threaded tests (the explorer's worker, the font in the render target, the race's
    # workers) under ThreadSanitizer; gcc's TSan cannot load target_clones' ifunc resolvers,
    # which the code turns off under __SANITIZE_THREAD__ (app/views/extension.c,
    # pe/model/tiny/nn.h); not -Werror: gcc -O2 with -fsanitize=thread warns of format
    # truncation that the release build, whose warnings are errors, does not see
    PELAB_SUITE=threads PELAB_TARGETS="$(printf 'tests/app/test_%s ' explorer explorer_work \
        font_thread lesson_race) tests/pe/model/test_race" TSAN_OPTIONS=halt_on_error=1 run_suite build-tsan \
        -Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false
    # libFuzzer harnesses (tests/fuzz) built by clang with ASan+UBSan: each replays its seed
    # corpus, then fuzzes for PELAB_FUZZ_SECONDS (30) seconds
    CC=clang PELAB_SUITE=fuzz PELAB_TARGETS="$(printf 'tests/fuzz/fuzz_%s ' checkpoint config gguf safetensors llama2c \
        tokenizer prompt command cli lesson animate race)" ASAN_OPTIONS=detect_leaks=1 run_suite build-fuzz \
        -Dbuildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true
    [ "$skipped" -gt 0 ] && echo "($skipped skipped: a tool they need is missing)"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

install_missing "${deps[@]}"
build build -Dbuildtype=release
exec ./build/app/pelab "$@"
