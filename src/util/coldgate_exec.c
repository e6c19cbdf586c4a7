// coldgate-exec REPORT_FD PROGRAM ARGV0 [ARG]...: starts a measured program for coldgate
// (util::SpawnOptions::own_peak_rss, src/util/spawn.cpp) so that its peak RSS is its own.
//
// A process keeps, across execve, the larger of its maxrss and the high-water RSS of the address
// space it leaves (Linux fs/exec.c, exec_mmap). A child coldgate starts itself — posix_spawn
// shares coldgate's address space until the exec, fork copies it — so begins with coldgate's
// peak, and a 17 MB program after a stage that made coldgate grow to 900 MB read 915 MB. This
// helper is small: coldgate spawns it, it forks (a fresh maxrss, its own small address space)
// and execs PROGRAM with ARGV0… and the environment it got. On REPORT_FD it writes
// "exec <errno>\n" (0 once PROGRAM runs) and, after PROGRAM's tree ended, "exit <wait status>
// <ru_maxrss KiB>\n" from wait4: PROGRAM's peak and its reaped descendants'. It then exits as
// PROGRAM did, a signal re-raised without a core dump. Plain C and libc only, never built with
// the sanitizers, so that it adds no more than a small program's start and ~1 MB of RSS.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int report_fd = -1;

// One write of `line` (short: one pipe write is atomic), retried on EINTR.
static void report(const char* line) {
  size_t left = strlen(line);
  while (left > 0) {
    ssize_t n = write(report_fd, line, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line += n;
    left -= (size_t)n;
  }
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fputs("usage: coldgate-exec REPORT_FD PROGRAM ARGV0 [ARG]... (internal to coldgate: it starts "
          "a stage's program)\n",
          stderr);
    return 2;
  }
  char* end = NULL;
  long fd = strtol(argv[1], &end, 10);
  if (*argv[1] == '\0' || *end != '\0' || fd < 3 || fd > 1024 ||
      fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0) {
    fprintf(stderr, "coldgate-exec: %s is not an open descriptor (internal to coldgate)\n", argv[1]);
    return 2;
  }
  report_fd = (int)fd;
  char line[128];
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    snprintf(line, sizeof line, "exec %d\n", errno);
    report(line);
    return 127;
  }
  // The signals coldgate sends the group are blocked across the fork: the child unblocks them
  // with the dispositions we started with (coldgate's defaults), and we ignore them before we
  // unblock, so none arriving in between ends us before we could report.
  static const int group_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  sigset_t block, old;
  sigemptyset(&block);
  for (size_t i = 0; i < sizeof group_signals / sizeof group_signals[0]; ++i) {
    sigaddset(&block, group_signals[i]);
  }
  sigprocmask(SIG_BLOCK, &block, &old);
  pid_t pid = fork();
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    execv(argv[2], argv + 3);
    int err = errno;
    ssize_t n = write(exec_pipe[1], &err, sizeof err);
    (void)n;
    _exit(127);
  }
  int fork_errno = errno;
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  for (size_t i = 0; i < sizeof group_signals / sizeof group_signals[0]; ++i) {
    sigaction(group_signals[i], &ignore, NULL);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  close(exec_pipe[1]);
  if (pid < 0) {
    snprintf(line, sizeof line, "exec %d\n", fork_errno);
    report(line);
    return 127;
  }
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(exec_pipe[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof exec_errno) exec_errno = 0;  // closed empty: the exec succeeded
  close(exec_pipe[0]);
  snprintf(line, sizeof line, "exec %d\n", exec_errno);
  report(line);

  int status = 0;
  struct rusage usage;
  memset(&usage, 0, sizeof usage);
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return 127;
  }
  if (exec_errno != 0) return 127;
  snprintf(line, sizeof line, "exit %d %ld\n", status, usage.ru_maxrss);
  report(line);
  close(report_fd);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(sig);
    return 128 + sig;
  }
  return 127;
}
