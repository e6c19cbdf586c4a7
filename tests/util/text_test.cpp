// stderr_excerpt and cause_line on what real programs print when they fail: the excerpt a failed
// stage or setup step quotes must keep the cause when a long list or stack follows it.
#include "util/text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace coldgate::util {
namespace {

// Django 3.2's template engine on `{% load staticfiles %}` (Debian's python3-django), the end of
// its traceback: the exception's message goes on over ten lines of library names.
const std::string k_django =
    "Traceback (most recent call last):\n"
    "  File \"/usr/lib/python3/dist-packages/django/template/defaulttags.py\", line 1039, in "
    "find_library\n"
    "    raise TemplateSyntaxError(\n"
    "django.template.exceptions.TemplateSyntaxError: 'staticfiles' is not a registered tag "
    "library. Must be one of:\n"
    "admin_list\nadmin_modify\nadmin_urls\ncache\nhumanize\ni18n\nl10n\nlog\nstatic\ntz\n";

// Node.js 20 on a connection refused, as `node -e "require('net').connect(1,'127.0.0.1')"`
// prints it: the error, its stack, the error's fields, the version.
const std::string k_node =
    "node:events:502\n"
    "      throw er; // Unhandled 'error' event\n"
    "      ^\n"
    "\n"
    "Error: connect ECONNREFUSED 127.0.0.1:1\n"
    "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16)\n"
    "Emitted 'error' event on Socket instance at:\n"
    "    at emitErrorNT (node:internal/streams/destroy:169:8)\n"
    "    at emitErrorCloseNT (node:internal/streams/destroy:128:3)\n"
    "    at process.processTicksAndRejections (node:internal/process/task_queues:82:21) {\n"
    "  errno: -111,\n"
    "  code: 'ECONNREFUSED',\n"
    "  syscall: 'connect',\n"
    "  address: '127.0.0.1',\n"
    "  port: 1\n"
    "}\n"
    "\n"
    "Node.js v20.20.2\n";

// Sequelize 6 on node-postgres when the server refuses the connection: the error's heading, its
// stack, then the error object with its nested causes, as Node.js 20 prints an uncaught one.
const std::string k_sequelize =
    "/app/node_modules/sequelize/lib/dialects/postgres/connection-manager.js:131\n"
    "                reject(new sequelizeErrors.ConnectionRefusedError(err));\n"
    "                       ^\n"
    "\n"
    "ConnectionRefusedError [SequelizeConnectionRefusedError]: connect ECONNREFUSED 127.0.0.1:1\n"
    "    at Client._connectionCallback "
    "(/app/node_modules/sequelize/lib/dialects/postgres/connection-manager.js:131:24)\n"
    "    at Client._handleErrorWhileConnecting (/app/node_modules/pg/lib/client.js:318:19)\n"
    "    at Client._handleErrorEvent (/app/node_modules/pg/lib/client.js:328:19)\n"
    "    at Connection.emit (node:events:524:28)\n"
    "    at Socket.reportStreamError (/app/node_modules/pg/lib/connection.js:57:12)\n"
    "    at Socket.emit (node:events:524:28)\n"
    "    at emitErrorNT (node:internal/streams/destroy:169:8)\n"
    "    at emitErrorCloseNT (node:internal/streams/destroy:128:3)\n"
    "    at process.processTicksAndRejections (node:internal/process/task_queues:82:21) {\n"
    "  parent: Error: connect ECONNREFUSED 127.0.0.1:1\n"
    "      at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16) {\n"
    "    errno: -111,\n    code: 'ECONNREFUSED',\n    syscall: 'connect',\n"
    "    address: '127.0.0.1',\n    port: 1\n  },\n"
    "  original: Error: connect ECONNREFUSED 127.0.0.1:1\n"
    "      at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16) {\n"
    "    errno: -111,\n    code: 'ECONNREFUSED',\n    syscall: 'connect',\n"
    "    address: '127.0.0.1',\n    port: 1\n  }\n}\n"
    "\n"
    "Node.js v20.20.2\n";

TEST(StderrExcerpt, KeepsTheExceptionBeforeALongListOrStack) {
  EXPECT_EQ(stderr_excerpt(k_django, 8),
            "django.template.exceptions.TemplateSyntaxError: 'staticfiles' is not a registered tag "
            "library. Must be one of:\n"
            "[… 2 lines …]\n"
            "admin_urls\ncache\nhumanize\ni18n\nl10n\nlog\nstatic\ntz");
  EXPECT_EQ(stderr_excerpt(k_node, 8),
            "Error: connect ECONNREFUSED 127.0.0.1:1\n"
            "[… 5 lines …]\n"
            "  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n"
            "  address: '127.0.0.1',\n  port: 1\n}\n\nNode.js v20.20.2");
  EXPECT_EQ(stderr_excerpt(k_sequelize, 8),
            "ConnectionRefusedError [SequelizeConnectionRefusedError]: connect ECONNREFUSED "
            "127.0.0.1:1\n"
            "[… 20 lines …]\n"
            "    code: 'ECONNREFUSED',\n    syscall: 'connect',\n    address: '127.0.0.1',\n"
            "    port: 1\n  }\n}\n\nNode.js v20.20.2");
}

TEST(StderrExcerpt, APythonExceptionWhoseNameSaysNothingIsFoundByItsTraceback) {
  // Django's ImproperlyConfigured ends in neither Error nor Exception: the line after the
  // traceback's frames is the exception all the same.
  std::string err =
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/python3/dist-packages/django/conf/__init__.py\", line 90, in "
      "__getattr__\n"
      "    raise ImproperlyConfigured(\"The SECRET_KEY setting must not be empty.\")\n"
      "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting must not be empty.\n"
      "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  EXPECT_EQ(stderr_excerpt(err, 3),
            "django.core.exceptions.ImproperlyConfigured: The SECRET_KEY setting must not be "
            "empty.\n[… 6 lines …]\n7\n8\n9");
}

TEST(StderrExcerpt, TheTailAloneWhenItHoldsTheCauseOrThereIsNone) {
  // The cause inside the tail, or the line just before it (one more line says it all).
  EXPECT_EQ(stderr_excerpt("x\nValueError: bad\na\nb\n", 3), "ValueError: bad\na\nb");
  EXPECT_EQ(stderr_excerpt("x\ny\nValueError: bad\na\nb\n", 2), "ValueError: bad\na\nb");
  // No cause anywhere: the tail, as tail_lines gives it.
  EXPECT_EQ(stderr_excerpt("a\nb\nc\nd\n", 2), "c\nd");
  EXPECT_EQ(stderr_excerpt("", 8), "");
  EXPECT_EQ(stderr_excerpt("one line", 8), "one line");
  // The last cause before the tail is kept, not the first.
  EXPECT_EQ(stderr_excerpt("ERROR:  first\nTypeError: second\n1\n2\n3\n", 1),
            "TypeError: second\n[… 2 lines …]\n3");
}

TEST(CauseLine, SeveritiesAndExceptionHeadingsAsTheRuntimesPrintThem) {
  for (const char* line :
       {"psql:load.sql:4: ERROR:  function lenght(unknown) does not exist",
        "2026-12-05 12:21:29.922 GMT [11983] FATAL:  could not create lock file",
        "ERROR: relation \"x\" does not exist", "ModuleNotFoundError: No module named 'nope'",
        "sqlalchemy.exc.ProgrammingError: (psycopg2.errors.UndefinedTable) relation \"x\" does "
        "not exist",
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        "TypeError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string",
        "Uncaught ReferenceError: x is not defined",
        "SequelizeDatabaseError: relation \"Users\" does not exist",
        "app.rb:3:in `<main>': undefined local variable or method `x' for main:Object (NameError)",
        "/app/models/user.rb:9:in `find': Couldn't find User with 'id'=1 "
        "(ActiveRecord::RecordNotFound)",
        "error: relation \"users\" does not exist", "fatal: not a git repository",
        "  ERROR:  relation \"x\" does not exist",
        "Exception in thread \"main\" java.lang.IllegalStateException: boom",
        "Unhandled exception. System.InvalidOperationException: No connection string",
        "java.lang.IllegalStateException", "KeyError"}) {
    EXPECT_TRUE(cause_line(line)) << line;
  }
  for (const char* line :
       {"resolver NOERROR: fine", "    at TCPConnectWrap.afterConnect (node:net:1611:16)",
        "  File \"load.py\", line 3, in <module>", "  error: indented is context",
        "KeyboardInterrupt", "terror: the film", "app.rb:3:in `<main>': counted (3 rows)",
        "Error handling is described in the manual", "ErrorPages: 3", "tz", "",
        "Emitted 'error' event on Socket instance at:", "counted (3 rows)"}) {
    EXPECT_FALSE(cause_line(line)) << line;
  }
}

TEST(OmissionLine, OnlyTheExcerptsOwnMarker) {
  EXPECT_TRUE(omission_line("[… 12 lines …]"));
  EXPECT_FALSE(omission_line("[1 lines]"));
  EXPECT_FALSE(omission_line("… 12 lines …"));
}

// A build log's cause for ab's one-line message: npm prints its usage text after the error,
// so the log's last lines say nothing of why. This is npm 11's `npm ci` on a package.json that
// gained a dependency its lock file lacks (cut in the middle; npm 9 prints "npm ERR!").
TEST(BuildLogCause, NpmsOwnMessageNotTheUsageTextAfterIt) {
  const std::string npm11 =
      "npm error code EUSAGE\n"
      "npm error\n"
      "npm error `npm ci` can only install packages when your package.json and package-lock.json "
      "or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` "
      "before continuing.\n"
      "npm error\n"
      "npm error Missing: dep@1.0.0 from lock file\n"
      "npm error\n"
      "npm error Clean install a project\n"
      "npm error\n"
      "npm error aliases: clean-install, ic, install-clean, isntall-clean\n"
      "npm error\n"
      "npm error Run \"npm help ci\" for more info\n"
      "npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log\n";
  EXPECT_EQ(build_log_cause(npm11, 3),
            "npm error `npm ci` can only install packages when your package.json and "
            "package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file "
            "with `npm install` before continuing.");
  const std::string npm9 =
      "npm ERR! code ENOTCACHED\n"
      "npm ERR! request to https://registry.npmjs.org/left-pad failed: cache mode is "
      "'only-if-cached' but no cached response is available.\n"
      "\n"
      "npm ERR! A complete log of this run can be found in:\n"
      "npm ERR!     /root/.npm/_logs/x-debug-0.log\n";
  EXPECT_EQ(build_log_cause(npm9, 2),
            "npm ERR! request to https://registry.npmjs.org/left-pad failed: cache mode is "
            "'only-if-cached' but no cached response is available.");
  // Inside the tail the message quotes it already.
  EXPECT_EQ(build_log_cause(npm9, 4), "");
}

TEST(BuildLogCause, ACompilerErrorBeforeNpmsLinesWinsOverThem) {
  const std::string tsc =
      "> app@1.0.0 build\n> tsc\n\n"
      "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
      "npm error code 2\n"
      "npm error path /srv/app\n"
      "npm error command failed\n"
      "npm error command sh -c tsc\n"
      "npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log\n";
  EXPECT_EQ(build_log_cause(tsc, 3),
            "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.");
  EXPECT_EQ(build_log_cause("main.c:3:5: error: unknown type name 'x'\n1\n2\n3\n", 3),
            "main.c:3:5: error: unknown type name 'x'");
  // npm's generic lines alone say nothing: no cause.
  EXPECT_EQ(build_log_cause("npm error code 2\nnpm error command failed\na\nb\nc\n", 3), "");
  EXPECT_EQ(build_log_cause("installing\ncompiling\n", 3), "");
  EXPECT_EQ(build_log_cause(std::string("Error: ") + std::string(300, 'x') + "\n1\n", 1),
            "Error: " + std::string(233, 'x') + "…");
}

}  // namespace
}  // namespace coldgate::util
