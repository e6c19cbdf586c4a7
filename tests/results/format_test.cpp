// failure_summary on the stderr tails real programs end with: the one line a verdict quotes
// must be the cause, not a hint, a caret or a pointer to --help.
#include "results/format.hpp"

#include <gtest/gtest.h>

namespace coldgate::results {
namespace {

TEST(FailureSummary, QuotesTheCauseNotTheHintOrTheUsagePointer) {
  // Django's manage.py with a mistyped subcommand.
  EXPECT_EQ(failure_summary("setup[0] `python3 manage.py migrat` failed (exit status 1):\n"
                            "Unknown command: 'migrat'. Did you mean migrate?\n"
                            "Type 'manage.py help' for usage.\n"),
            "setup[0] `python3 manage.py migrat` failed (exit status 1): Unknown command: "
            "'migrat'. Did you mean migrate?");
  // A server that would not start: its log's FATAL line, then a HINT behind the log prefix.
  EXPECT_EQ(failure_summary("PostgreSQL server did not start (exit status 1); last 20 lines of "
                            "its log:\n"
                            "2026-12-05 12:21:29.922 GMT [11983] LOG:  starting PostgreSQL 15.18\n"
                            "2026-12-05 12:21:29.922 GMT [11983] FATAL:  could not create lock "
                            "file \"/run/x/.s.PGSQL.5432.lock\": Permission denied\n"
                            "2026-12-05 12:21:29.922 GMT [11983] HINT:  Is another postmaster "
                            "running?\n"
                            "2026-12-05 12:21:29.923 GMT [11983] LOG:  database system is shut "
                            "down\n"),
            "PostgreSQL server did not start (exit status 1); last 20 lines of its log: "
            "2026-12-05 12:21:29.922 GMT [11983] FATAL:  could not create lock file "
            "\"/run/x/.s.PGSQL.5432.lock\": Permission denied");
  // psql's error, its LINE, caret and HINT.
  EXPECT_EQ(failure_summary("setup[1] `psql -f load.sql` failed (exit status 3):\n"
                            "psql:load.sql:4: ERROR:  function lenght(unknown) does not exist\n"
                            "LINE 1: select lenght('x');\n"
                            "               ^\n"
                            "HINT:  No function matches the given name and argument types.\n"),
            "setup[1] `psql -f load.sql` failed (exit status 3): psql:load.sql:4: ERROR:  "
            "function lenght(unknown) does not exist");
  // A Python traceback: its last line, the exception.
  EXPECT_EQ(failure_summary("stage feed: cold run 1/3: exit status 1; stderr ends:\n"
                            "Traceback (most recent call last):\n"
                            "  File \"load.py\", line 3, in <module>\n"
                            "    import nope\n"
                            "ModuleNotFoundError: No module named 'nope'\n"),
            "stage feed: cold run 1/3: exit status 1; stderr ends: ModuleNotFoundError: No module "
            "named 'nope'");
  // Nothing after the first line, or only context: the first line alone.
  EXPECT_EQ(failure_summary("timed out after 10s"), "timed out after 10s");
  EXPECT_EQ(failure_summary("exit status 2:\n  \nTry 'x --help' for more information.\n"),
            "exit status 2:");
  // "ERROR:" inside a word is no severity: "NOERROR:" is not the cause over the last line.
  EXPECT_EQ(failure_summary("failed:\nresolver NOERROR: fine\nboom\n"), "failed: boom");
}

TEST(FailureSummary, QuotesTheExceptionAboveAStackOrTheLineAnExcerptKept) {
  // Node.js: the error above its stack and fields, not the version line that ends stderr.
  EXPECT_EQ(failure_summary("cold run 1/2: exit status 1; stderr ends:\n"
                            "Error: connect ECONNREFUSED 127.0.0.1:1\n"
                            "[… 5 lines …]\n"
                            "  port: 1\n}\n\nNode.js v20.20.2"),
            "cold run 1/2: exit status 1; stderr ends: Error: connect ECONNREFUSED 127.0.0.1:1");
  // The line util::stderr_excerpt kept before its marker, even when its name says nothing.
  EXPECT_EQ(failure_summary("setup[0] `python3 manage.py check` failed (exit status 1):\n"
                            "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting "
                            "must not be empty.\n"
                            "[… 6 lines …]\n"
                            "7\n8\n9"),
            "setup[0] `python3 manage.py check` failed (exit status 1): "
            "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting must not be "
            "empty.");
  // A list after a heading that ends in ':': the heading, not the list's last item.
  EXPECT_EQ(failure_summary("x failed:\n"
                            "django.template.exceptions.TemplateSyntaxError: 'staticfiles' is not a "
                            "registered tag library. Must be one of:\n"
                            "static\ntz\n"),
            "x failed: django.template.exceptions.TemplateSyntaxError: 'staticfiles' is not a "
            "registered tag library. Must be one of:");
}

}  // namespace
}  // namespace coldgate::results
