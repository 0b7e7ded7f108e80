#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` once, into .local-model/bin, from PyPI only:
#   - the source: the sdist of llama-cpp-python==0.3.36 vendors llama.cpp (tools/server);
#   - the build tools: `cmake` and `ninja` from PyPI into .local-model/build-venv;
#   - a C++ compiler from the machine (g++).
# Static libraries (-DBUILD_SHARED_LIBS=OFF): one self-contained binary, no rpath to keep right.
# The ISA is pinned (GGML_NATIVE=OFF) because a -march=native build died with SIGILL on some of
# these machines.
# Idempotent: nothing to do when the binary is there. A built binary is also kept in the user's
# cache (like pip's wheel cache for the old route), so a fresh clone on the same machine, CI's
# included, copies it instead of building again; the source and objects (~1 GB) are deleted.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.local-model"
python="${PYTHON:-python3}"
bin="$dir/bin/llama-server"
version="0.3.36"
flags=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF)
# The cache entry is named by the source version and the flags: other flags, another binary.
key="$(printf '%s ' "$version" "${flags[@]}" | sha256sum | cut -c1-16)"
cached="${XDG_CACHE_HOME:-$HOME/.cache}/agent-tutorial/llama-server-$version-$key"
mkdir -p "$dir"

say() { printf 'build-llama-server: %s\n' "$*" >&2; }
# How long each step took the last time on this machine (see local-model.sh).
timings="${XDG_CACHE_HOME:-$HOME/.cache}/agent-tutorial/timings"
last_time() { [ -f "$timings/$1" ] && printf '; %s s last time' "$(cat "$timings/$1")" || true; }
took() { mkdir -p "$timings" && echo "$2" >"$timings/$1"; }

[ -x "$bin" ] && exit 0
# Two set-ups at once (two terminals, `just e2e-local` beside `just local`) build once.
exec 9>"$dir/build.lock"
flock 9
[ -x "$bin" ] && exit 0

install_binary() {
    mkdir -p "$dir/bin"
    cp "$1" "$bin.part"
    chmod +x "$bin.part"
    mv "$bin.part" "$bin"
}

if [ -x "$cached" ]; then
    say "using the llama-server built before ($cached)"
    install_binary "$cached"
    exit 0
fi
command -v g++ >/dev/null || { say "a C++ compiler (g++) is needed to build llama-server"; exit 1; }

start=$SECONDS
venv="$dir/build-venv"
if [ ! -x "$venv/bin/cmake" ] || [ ! -x "$venv/bin/ninja" ]; then
    say "installing cmake and ninja from PyPI into .local-model/build-venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check cmake ninja
fi

src="$dir/src/llama_cpp_python-$version"
if [ ! -f "$src/vendor/llama.cpp/CMakeLists.txt" ]; then
    say "downloading the llama-cpp-python==$version sdist (76 MB$(last_time source-download)) for the llama.cpp it vendors"
    fetched=$SECONDS
    rm -rf "$dir/src"
    mkdir -p "$dir/src"
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "$venv/bin/pip" download -q --disable-pip-version-check --no-deps \
        --no-binary llama-cpp-python -d "$tmp" "llama-cpp-python==$version"
    tar -xzf "$tmp/llama_cpp_python-$version.tar.gz" -C "$dir/src"
    took source-download "$((SECONDS - fetched))"
fi

say "building llama-server (~8 minutes on 2 idle cores$(last_time server-build); log: .local-model/build.log)"
built=$SECONDS
export PATH="$venv/bin:$PATH"
if ! {
    cmake -S "$src/vendor/llama.cpp" -B "$dir/build" -G Ninja "${flags[@]}" &&
        ninja -C "$dir/build" llama-server
} >"$dir/build.log" 2>&1; then
    say "the build failed; last lines of .local-model/build.log:"
    tail -n 30 "$dir/build.log" >&2
    exit 1
fi

mkdir -p "$(dirname "$cached")"
cp "$dir/build/bin/llama-server" "$cached.part"
mv "$cached.part" "$cached"
install_binary "$cached"
took server-build "$((SECONDS - built))"
rm -rf "$dir/build" "$dir/src" "$dir/build-venv"
say "built .local-model/bin/llama-server in $((SECONDS - start)) s"
