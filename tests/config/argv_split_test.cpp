#include "config/argv_split.h"

#include <catch2/catch.hpp>

namespace swapd {
namespace {

using Words = std::vector<std::string>;

Words Split(std::string_view s) {
  auto r = SplitCommand(s);
  REQUIRE(r.ok());
  return r.value();
}

TEST_CASE("SplitCommand splits on blanks and newlines", "[unit][config]") {
  CHECK(Split("llama-server --port 8080") == Words{"llama-server", "--port", "8080"});
  CHECK(Split("  a\t b \n\n c  ") == Words{"a", "b", "c"});
}

TEST_CASE("SplitCommand honours single and double quotes", "[unit][config]") {
  CHECK(Split(R"(a 'b c' "d e")") == Words{"a", "b c", "d e"});
  CHECK(Split(R"(--chat-template-kwargs '{"enable_thinking": false}')") ==
        Words{"--chat-template-kwargs", R"({"enable_thinking": false})"});
  CHECK(Split(R"(x"y"'z')") == Words{"xyz"});
  CHECK(Split(R"(a "" '' b)") == Words{"a", "", "", "b"});
  CHECK(Split("'a\\b'") == Words{"a\\b"});  // nothing escapes inside single quotes
  CHECK(Split("'it''s'") == Words{"its"});
  CHECK(Split("\"multi\nline\"") == Words{"multi\nline"});
}

TEST_CASE("SplitCommand backslash escapes like a POSIX shell", "[unit][config]") {
  CHECK(Split(R"(a\ b c)") == Words{"a b", "c"});
  CHECK(Split(R"(C:\Users\me)") == Words{"C:Usersme"});  // as llama-swap does on Linux
  CHECK(Split(R"("a\"b" "c\\d" "\$x" "\n")") == Words{"a\"b", "c\\d", "$x", "\\n"});
  CHECK(Split(R"(--regex "blk\.[0-9]")") == Words{"--regex", "blk\\.[0-9]"});
}

TEST_CASE("SplitCommand drops comment lines and joins continuations", "[unit][config]") {
  CHECK(Split("a\n  # a comment 'with quote\nb") == Words{"a", "b"});
  CHECK(Split("# first\na") == Words{"a"});
  CHECK(Split("a --x=1#not-a-comment") == Words{"a", "--x=1#not-a-comment"});
  CHECK(Split("a \\\n  --b \\\n  --c") == Words{"a", "--b", "--c"});
  CHECK(Split("a\\\n-b") == Words{"a", "-b"});  // the backslash becomes a space
  CHECK(Split("a \\") == Words{"a"});
}

TEST_CASE("SplitCommand reports unterminated quotes and empty commands", "[unit][config]") {
  auto dq = SplitCommand("a \"b c");
  REQUIRE_FALSE(dq.ok());
  CHECK(dq.status().message() == "unterminated double quote");
  auto sq = SplitCommand("a 'b");
  REQUIRE_FALSE(sq.ok());
  CHECK(sq.status().message() == "unterminated single quote");
  CHECK_FALSE(SplitCommand("   \n # only a comment\n").ok());
}

TEST_CASE("StripCommentLines keeps everything but # lines", "[unit][config]") {
  CHECK(StripCommentLines("a\n   # ${nope}\nb # not\n#x") == "a\nb # not");
}

TEST_CASE("HasWindowsPath spots drive letters", "[unit][config]") {
  CHECK(HasWindowsPath(R"(C:\apps\llama-server.exe --port 1)"));
  CHECK(HasWindowsPath(R"(x "D:\models\a.gguf")"));
  CHECK_FALSE(HasWindowsPath("C:/apps/llama-server.exe"));
  CHECK_FALSE(HasWindowsPath(R"(--regex "a:\.b")"));
}

}  // namespace
}  // namespace swapd
