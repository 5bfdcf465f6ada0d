#include "config/argv_split.h"

#include "base/text.h"

namespace swapd {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      return lines;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
}

bool IsWordSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }

}  // namespace

std::string StripCommentLines(std::string_view text) {
  std::vector<std::string> kept;
  for (auto line : Lines(text)) {
    if (TrimSpace(line).starts_with('#')) continue;
    kept.emplace_back(line);
  }
  return Join(kept, "\n");
}

bool HasWindowsPath(std::string_view t) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto alnum = [&](char c) { return alpha(c) || (c >= '0' && c <= '9') || c == '_'; };
  for (size_t i = 0; i + 3 < t.size(); ++i) {
    bool word_start = i == 0 || t[i - 1] == ' ' || t[i - 1] == '\t' || t[i - 1] == '\n' ||
                      t[i - 1] == '"' || t[i - 1] == '\'' || t[i - 1] == '=';
    if (word_start && alpha(t[i]) && t[i + 1] == ':' && t[i + 2] == '\\' && alnum(t[i + 3])) {
      return true;
    }
  }
  return false;
}

Result<std::vector<std::string>> SplitCommand(std::string_view command) {
  std::vector<std::string> lines;
  for (auto line : Lines(command)) {
    std::string_view trimmed = TrimSpace(line);
    if (trimmed.starts_with('#')) continue;
    if (trimmed.ends_with('\\')) {
      trimmed.remove_suffix(1);
      lines.push_back(std::string(trimmed) + " ");
    } else {
      lines.emplace_back(line);
    }
  }
  const std::string text = Join(lines, "\n");

  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;  // '\'' or '"' while inside quotes
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool has_next = i + 1 < text.size();
    char next = has_next ? text[i + 1] : '\0';
    if (c == '\\' && quote != '\'') {
      if (!has_next || next == '\n') {  // line continuation (or a lone final backslash)
        ++i;
        continue;
      }
      if (quote == 0 || next == '$' || next == '`' || next == '"' || next == '\\') {
        word += next;
        in_word = true;
        ++i;
        continue;
      }
      // Inside double quotes any other backslash is literal.
    }
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (IsWordSpace(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    word += c;
    in_word = true;
  }
  if (quote != 0) {
    return Status::Error(ErrorCode::kInvalidArgument,
                         quote == '"' ? "unterminated double quote" : "unterminated single quote");
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return Status::Error(ErrorCode::kInvalidArgument, "empty command");
  return words;
}

}  // namespace swapd
