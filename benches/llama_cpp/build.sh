#!/usr/bin/env bash
# Builds llama.cpp from the sources in the llama-cpp-sys-2 crate (fetched by
# cargo, the only client we may download with; the crate leaves out
# llama-bench, so timing.cpp beside this script does its job through the C
# API, and batch.cpp drives many prompts at once) into target/llama-cpp/, and
# prints the folder that holds both programs (llama-timing, llama-batch). The
# generate bench runs them on the same GGUF as codecal.
# Needs cmake and a C++ compiler; as root it installs cmake from Debian.
#
# `build.sh pypi` instead links the same programs against the libraries that
# llama-cpp-python 0.3.36 built for this CPU in target/llama-server-venv
# (benches/llama_server/check.py makes it), with the headers of that same
# sdist (fetched by the venv's pip, hash-pinned by requirements.txt), into
# target/llama-cpp-pypi/: PyPI's llama.cpp without Python in the way.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
programs="$(cat "$root"/benches/llama_cpp/{timing,batch,greedy}.cpp | md5sum | cut -c1-16)"

# Compiles timing, batch and greedy against headers $1 (llama.h's folder),
# $2 (ggml.h's) and the libraries in $3, into $4.
compile_programs() {
    for program in timing batch greedy; do
        g++ -O2 -std=c++17 "$root/benches/llama_cpp/$program.cpp" -o "$4/llama-$program.partial" \
            -I "$1" -I "$2" -L "$3" -Wl,-rpath,"$3" -lllama -lggml -lggml-base >&2
        mv "$4/llama-$program.partial" "$4/llama-$program"
    done
}

if [[ "${1:-}" == pypi ]]; then
    out="$root/target/llama-cpp-pypi"
    venv="$root/target/llama-server-venv"
    libs="$(echo "$venv"/lib/python3*/site-packages/llama_cpp/lib)"
    if [[ ! -f "$libs/libllama.so" ]]; then
        echo "llama-cpp-python's libraries are missing ($libs): python3 benches/llama_server/check.py builds them" >&2
        exit 1
    fi
    stamp="libs:$(cat "$libs"/lib*.so | md5sum | cut -c1-16) programs:$programs"
    if [[ -x "$out/llama-timing" && "$(cat "$out/options" 2>/dev/null)" == "$stamp" ]]; then
        echo "$out"
        exit 0
    fi
    mkdir -p "$out/sdist"
    grep '^llama-cpp-python' "$root/benches/llama_server/requirements.txt" | sed 's/\[server\]//' > "$out/requirement.txt"
    "$venv/bin/python" -m pip download --quiet --no-deps --no-binary :all: --no-build-isolation \
        --require-hashes -r "$out/requirement.txt" -d "$out/sdist" >&2
    rm -rf "$out/headers" && mkdir -p "$out/headers"
    tar -xzf "$out"/sdist/llama_cpp_python-*.tar.gz -C "$out/headers" --strip-components=3 \
        --wildcards '*/vendor/llama.cpp/include/*' '*/vendor/llama.cpp/ggml/include/*'
    compile_programs "$out/headers/include" "$out/headers/ggml/include" "$libs" "$out"
    echo "$stamp" > "$out/options"
    echo "$out"
    exit 0
fi

out="$root/target/llama-cpp"
# `build.sh amx` is the native build with ggml's AMX kernels, on a CPU that
# reports AMX: its own folder, so that the bench can time both and keep
# the faster where it runs (on a 2-core Xeon that granted the tile state
# it died with SIGILL on one GGUF and SIGSEGV at ldtilecfg on another, as
# in llama.cpp's issue #20824).
# GGML_NATIVE (-march=native: every vector extension this CPU has), the
# build llama.cpp's own instructions give, except on a CPU that reports AMX:
# there -march=native turns on ggml's AMX kernels, which die with SIGILL
# where the kernel or sandbox does not grant AMX state, so every other
# extension is named instead, on exactly when this CPU reports it (an
# AVX-VNNI kernel on a CPU with AVX512-VNNI only also dies with SIGILL). A
# change of CPU rebuilds.
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
on() { [[ "$flags" == *" $1 "* ]] && echo ON || echo OFF; }
if [[ "${1:-}" == amx ]]; then
    if [[ "$flags" != *" amx_int8 "* ]]; then
        echo "llama.cpp with AMX: this CPU reports no AMX-INT8" >&2
        exit 1
    fi
    out="$root/target/llama-cpp-amx"
    options=(-DGGML_NATIVE=ON)
elif [[ "$flags" != *" amx"* ]]; then
    options=(-DGGML_NATIVE=ON)
else
    options=(-DGGML_NATIVE=OFF -DGGML_AVX="$(on avx)" -DGGML_AVX2="$(on avx2)" -DGGML_FMA="$(on fma)"
        -DGGML_F16C="$(on f16c)" -DGGML_BMI2="$(on bmi2)" -DGGML_AVX_VNNI="$(on avx_vnni)"
        -DGGML_AVX512="$(on avx512f)" -DGGML_AVX512_VBMI="$(on avx512_vbmi)"
        -DGGML_AVX512_VNNI="$(on avx512_vnni)" -DGGML_AVX512_BF16="$(on avx512_bf16)")
fi
# What the build was made with: its options, this CPU's extensions and the
# timing programs' sources (the library is rebuilt incrementally).
stamp="${options[*]} cpu:$(echo "$flags" | md5sum | cut -c1-16) programs:$programs"
if [[ -x "$out/llama-timing" && -x "$out/llama-batch" && -x "$out/llama-greedy" && "$(cat "$out/options" 2>/dev/null)" == "$stamp" ]]; then
    echo "$out"
    exit 0
fi
if ! command -v cmake >/dev/null; then
    if [[ $(id -u) -eq 0 ]]; then
        apt-get update -qq >&2 && apt-get install -y -qq cmake >&2
    else
        echo "llama.cpp baseline: cmake is missing (apt-get install cmake)" >&2
        exit 1
    fi
fi
mkdir -p "$out/fetch/src"
cp "$root/benches/llama_cpp/Cargo.toml.in" "$out/fetch/Cargo.toml"
touch "$out/fetch/src/lib.rs"
# The crate's version is pinned in Cargo.toml.in; cargo verifies its checksum.
cargo fetch --quiet --manifest-path "$out/fetch/Cargo.toml" >&2
src=$(cargo metadata --format-version 1 --manifest-path "$out/fetch/Cargo.toml" |
    python3 -c 'import json,sys,os; m=json.load(sys.stdin); print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"]=="llama-cpp-sys-2"))')
cmake -S "$src/llama.cpp" -B "$out/build" -DCMAKE_BUILD_TYPE=Release \
    "${options[@]}" \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_COMMON=OFF >&2
cmake --build "$out/build" --target llama -j "$(nproc)" >&2
compile_programs "$src/llama.cpp/include" "$src/llama.cpp/ggml/include" "$out/build/bin" "$out"
echo "$stamp" > "$out/options"
echo "$out"
