// How `swapd check` shows one argv word: shell-quoted only when it must be. Pure.
#pragma once

#include <string>
#include <string_view>

namespace swapd {

// One argv word as it is shown: unchanged unless it is empty or holds whitespace or quotes, then
// single-quoted shell style ('it'\''s'); a word with control characters (a newline in a chat
// template) is shown as $'...' with C escapes so that each word stays on one line.
std::string QuoteWord(std::string_view word);

}  // namespace swapd
