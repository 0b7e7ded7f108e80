"""Start llama-cpp-python's OpenAI-compatible server with every generation bounded.

llama-cpp-python's `chatml-function-calling` handler runs some of its internal completions
(the tool-call arguments, the message after a tool call) with `max_tokens=None`, i.e. until
the context is full. A 135M model under a JSON grammar can then generate for many minutes,
and the single-threaded server answers nothing else meanwhile, even after the client gave up.
This wrapper caps those unbounded completions; requests that set `max_tokens` keep theirs.
"""

import os
import runpy

import llama_cpp.llama

CAP = int(os.environ.get("LOCAL_MODEL_MAX_TOKENS", "512"))
_create_completion = llama_cpp.llama.Llama.create_completion


def _bounded(self, *args, **kwargs):
    if "max_tokens" in kwargs and kwargs["max_tokens"] is None:
        kwargs["max_tokens"] = CAP
    return _create_completion(self, *args, **kwargs)


llama_cpp.llama.Llama.create_completion = _bounded
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
