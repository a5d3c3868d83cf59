#pragma once
// runIsolated: runs a function in a child process (fork) and returns the text it produced, so that code that
// cannot be trusted with a user's file — a crash, a stack overflow, runaway memory or a hang inside it —
// cannot take the program down or freeze it. The child shares nothing back but the text: f must have no
// effect the caller relies on. Used for chat templates (core/text/chat_template: llama.cpp's Jinja engine,
// which recurses without limit on nested syntax, recursive macros and nested values).
//
//   std::string out = runIsolated([&] { return render(); }, 10000, "'tokenizer_config.json': the chat
//   template");

#include <functional>
#include <string>

namespace attnlens {

// f's result; f throwing std::exception → attnlens::Error("<what> failed: <its message>"); the child dying (a
// signal, a sanitizer report) → attnlens::Error("<what> crashed its renderer …"); still running after
// timeoutMs → killed, attnlens::Error("<what> took longer than …").
std::string runIsolated(const std::function<std::string()>& f, int timeoutMs, const std::string& what);

} // namespace attnlens
