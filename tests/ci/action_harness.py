#!/usr/bin/python3
"""Replays coldgate's GitHub Action (ci/github/action.yml) and its workflows (coldgate.yml,
coldgate-comment.yml, coldgate-record.yml, coldgate-stack.yml, and coldgate-history.yml with its
two jobs: record and push the history, then deploy the page to Pages) the way GitHub's runner
runs them, with the real coldgate binary, on temporary git repositories whose origin is a local
bare repository, against a fake GitHub API on 127.0.0.1 (comments, pull requests, the
repository; harness/: runner.py, expressions.py, fake_github.py).

  /usr/bin/python3 tests/ci/action_harness.py --coldgate build-dev/coldgate --scenario NAME
  … --scenario package --package coldgate_<version>_amd64.deb
                             the action's `package` input, in the workflow's container (root, podman)
  … --scenario list          the scenarios
  … --keep                   keep the temporary folder (jobs' logs, workspaces, artifacts)
  … -v                       print every job's log as it runs

Exit 0 when every check of the scenario holds, 1 when one fails (the failing jobs' logs are
printed), 2 when the harness cannot replay something.
"""

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import traceback
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.fake_github import FakeGitHub  # noqa: E402
from harness.runner import Harness, HarnessError, Job, git, run_workflow_job  # noqa: E402

SOURCE_DIR = Path(__file__).resolve().parents[2]
# The workflows' `container:` images, for the scenarios that replay them: the debootstrap'd
# bookworm of ci/base-image.sh (no registry here) stands in for Docker Hub's debian:bookworm.
CONTAINER_IMAGES = {"debian:bookworm": "localhost/debian:bookworm-slim"}
IN_CONTAINERS = {"package"}

# The project under test: one timed stage (pg_sleep) and one with a snapshot. Gated on the
# query's own time, so 20 ms → 400 ms is a 20× regression, far above max_ratio 5 and
# min_delta 20 ms, whatever else the machine does. max_ratio 5, not the default 10: ab and
# stack measure more cold runs of a ratio between max_ratio/2 and 2 × max_ratio (the measured
# 17× lay in 5–20 and took 10 more runs of each side, ~15 s a job); 17× is out of 2.5–10.
CONFIG = """\
version: 1
database: {}
defaults: { runs: 3, warm: 0 }
stages:
  - name: load
    sql: stage.sql
  - name: items
    sql: items.sql
    decode: json
    snapshot: { path: snapshots/items.json }
gate: { max_ratio: 5, min_delta: 20ms, metrics: [query_ms] }
report: { title: shop }
"""
FAST = "SELECT pg_sleep(0.02);\n"
SLOW = "SELECT pg_sleep(0.4);\n"
ITEMS = ("SELECT json_agg(json_build_object('id', i, 'name', '{word} ' || i) ORDER BY i)\n"
         "FROM generate_series(1, 3) AS i;\n")


class Skip(Exception):
    """The scenario cannot run here (exit 77: ctest's SKIP_RETURN_CODE)."""


class Checks:
    def __init__(self):
        self.failed = []
        self.passed = 0
        self.jobs_to_show = []

    def check(self, condition, what, detail="", job=None):
        if condition:
            self.passed += 1
            print(f"  ok    {what}", flush=True)
        else:
            self.failed.append(what)
            print(f"  FAIL  {what}" + (f"\n        {detail}" if detail else ""), flush=True)
            if job is not None and job not in self.jobs_to_show:
                self.jobs_to_show.append(job)


def verdict_line(body):
    """The first line under the report's title: what the reader sees first."""
    for line in body.splitlines():
        if line.startswith("<!--") or line.startswith("## ") or not line.strip():
            continue
        return line
    return ""


class Scenario:
    def __init__(self, harness, checks):
        self.h = harness
        self.c = checks
        self.api = harness.api
        self.origin = harness.origin
        self.pulls = {}
        self.api.add_repository(harness.repository, self.origin.default_branch)
        self.package = None  # --package: the .deb the package scenario installs

    # -- the repository --

    def main(self):
        snapshot = subprocess.run(
            [str(self.h.coldgate), "canon", "-"], check=True, stdout=subprocess.PIPE, text=True,
            input=json.dumps([{"id": i, "name": f"item {i}"} for i in (1, 2, 3)])).stdout
        return self.origin.commit("main", {
            "coldgate.yaml": CONFIG, "stage.sql": FAST, "items.sql": ITEMS.format(word="item"),
            "snapshots/items.json": snapshot, "README.md": "# shop\n",
        }, "shop: a stage and a snapshot")

    def branch(self, name, files, message, parent="main"):
        return self.origin.commit(name, files, message, parent=parent)

    def pull_request(self, number, head, base, fork=False, title=""):
        """Opens pull request `number` (or, for an open one, its new push): on origin its refs,
        in the fake API its entry in the open pull requests."""
        pr = self.origin.open_pull_request(number, head, base)
        pr["fork"] = fork
        self.pulls[number] = pr
        self.api.add_pull(self.h.repository, number, pr["head_sha"], head, base, title,
                          "contributor/shop" if fork else None)
        return pr

    # -- jobs --

    def pr_event(self, pr):
        repo = self.h.repository
        head_repo = "contributor/shop" if pr["fork"] else repo
        return {
            "action": "synchronize", "number": pr["number"],
            "pull_request": {
                "number": pr["number"], "state": "open",
                "head": {"sha": pr["head_sha"], "ref": pr["head"],
                         "repo": {"full_name": head_repo, "fork": pr["fork"]}},
                "base": {"sha": pr["base_sha"], "ref": pr["base"],
                         "repo": {"full_name": repo, "fork": False}},
            },
            "repository": {"full_name": repo, "default_branch": "main"},
        }

    def pr_job(self, pr, label, inputs=None, checkout=None, after_checkout=None):
        job = Job(self.h, label, event_name="pull_request", event=self.pr_event(pr),
                  ref=f"refs/pull/{pr['number']}/merge", sha=pr["merge_sha"], base_ref=pr["base"],
                  head_ref=pr["head"])
        return self._run(job, "coldgate.yml", "coldgate", inputs, checkout, after_checkout)

    def stack_job(self, pr, label, checkout=None):
        """coldgate-stack.yml's job `stack` on a pull_request event of `pr`."""
        job = Job(self.h, label, event_name="pull_request", event=self.pr_event(pr),
                  ref=f"refs/pull/{pr['number']}/merge", sha=pr["merge_sha"], base_ref=pr["base"],
                  head_ref=pr["head"], workflow_name="coldgate stack", job_id="stack")
        return self._run(job, "coldgate-stack.yml", "stack", checkout=checkout)

    def push_job(self, branch, label):
        sha = self.origin.tip(branch)
        event = {"ref": f"refs/heads/{branch}", "after": sha,
                 "repository": {"full_name": self.h.repository, "default_branch": "main"}}
        job = Job(self.h, label, event_name="push", event=event, ref=f"refs/heads/{branch}", sha=sha,
                  workflow_name="coldgate record", job_id="record")
        return self._run(job, "coldgate-record.yml", "record", {"config": "coldgate.yaml"})

    def push_event(self, branch, sha):
        return {"ref": f"refs/heads/{branch}", "after": sha,
                "repository": {"full_name": self.h.repository, "default_branch": "main"}}

    def history_record(self, label, sha, after_checkout=None):
        """coldgate-history.yml's job `record` on the push of `sha` to main: a new run."""
        job = Job(self.h, f"{label}: record", event_name="push", event=self.push_event("main", sha),
                  ref="refs/heads/main", sha=sha, workflow_name="coldgate history", job_id="record")
        return self._run(job, "coldgate-history.yml", "record", after_checkout=after_checkout)

    def history_deploy(self, record):
        """The same run's job `deploy`, after `record` (needs: record)."""
        job = Job(self.h, record.name.replace(": record", ": deploy"), event_name="push", event=record.event,
                  ref=record.ref, sha=record.sha, workflow_name="coldgate history", job_id="deploy",
                  run_id=record.run_id)
        return self._run(job, "coldgate-history.yml", "deploy", needs={"record": record})

    def comment_job(self, measuring, pr, label):
        """The fork-safe half: coldgate-comment.yml on the workflow_run event of `measuring`."""
        event = {"action": "completed", "workflow_run": {
            "id": measuring.run_id, "name": "coldgate", "event": "pull_request",
            "conclusion": measuring.conclusion, "head_sha": pr["head_sha"], "head_branch": pr["head"]},
            "repository": {"full_name": self.h.repository, "default_branch": "main"}}
        job = Job(self.h, label, event_name="workflow_run", event=event, ref="refs/heads/main",
                  sha=self.origin.tip("main"), workflow_name="coldgate comment", job_id="comment")
        return self._run(job, "coldgate-comment.yml", "comment")

    def _run(self, job, workflow, job_id, inputs=None, checkout=None, after_checkout=None, needs=None):
        print(f"• {job.name}: {workflow} on {job.event_name} {job.ref}", flush=True)
        job.api_mark = len(self.api.requests)
        started = time.monotonic()
        try:
            run_workflow_job(self.h, workflow, job_id, job, action_inputs=inputs, checkout=checkout,
                             after_checkout=after_checkout, needs=needs)
        except Exception:
            print("\n".join(job.log_lines[-60:]))
            raise
        job.seconds = time.monotonic() - started
        print(f"  ({job.seconds:.1f} s: job {job.conclusion}, exit {job.exit_code})", flush=True)
        return job

    # -- what a job left --

    def writes(self, job):
        return [(m, status) for m, _, status in self.api.requests[job.api_mark:] if m in ("POST", "PATCH")]

    def output(self, job, name="exit-code"):
        return job.action_runs[-1]["outputs"].get(name) if job.action_runs else None

    def artifact(self, job):
        return self.h.artifacts.folder(job.run_id, "coldgate-out")

    def report(self, job):
        """The report.md the job uploaded ("" when none)."""
        report = self.artifact(job) / "report.md"
        return report.read_text() if report.is_file() else ""

    def job_step(self, job, name):
        """A step of the workflow's job itself (not of the action), by its name or `uses:`."""
        return next((r for r in job.scope.results if r.name == name), None) if job.scope else None

    def step(self, job, name):
        for run in job.action_runs:
            for result in run["steps"].values():
                if result.name == name:
                    return result
        return None

    def comment_of(self, pr):
        comments = [c for c in self.api.comments_of(self.h.repository, pr["number"])
                    if c["body"].startswith("<!-- coldgate:report:")]
        return comments

    # -- the checks every pull request job gets --

    def expect(self, job, pr, *, exit_code, writes, verdict, contains=(), not_contains=()):
        c = self.c
        name = job.name
        c.check(job.exit_code == exit_code, f"{name}: the job fails with coldgate's exit code {exit_code}"
                if exit_code else f"{name}: the job passes",
                f"job {job.conclusion}, exit {job.exit_code}, first failed step {job.first_failure}", job)
        c.check(self.output(job) == str(exit_code), f"{name}: output exit-code is {exit_code}",
                f"got {self.output(job)!r}", job)
        got = self.writes(job)
        c.check(got == writes, f"{name}: comment requests {writes or 'none'}", f"got {got}", job)
        pr_number = self.artifact(job) / "pr-number"
        c.check(pr_number.is_file() and pr_number.read_text().strip() == str(pr["number"]),
                f"{name}: the artifact has pr-number {pr['number']}",
                pr_number.read_text() if pr_number.is_file() else "no pr-number in the artifact", job)
        results = self.artifact(job) / "results.json"
        if results.is_file():
            commit = json.loads(results.read_text()).get("git", {}).get("commit")
            c.check(commit == pr["head_sha"], f"{name}: head is the pull request's head commit, not the merge commit",
                    f"results.json names {commit}, head {pr['head_sha']}, merge {pr['merge_sha']}", job)
        if verdict is None:
            return None
        comments = self.comment_of(pr)
        c.check(len(comments) == 1, f"{name}: the pull request has one coldgate comment",
                f"{len(comments)} comments", job)
        if not comments:
            return None
        body = comments[-1]["body"]
        first = verdict_line(body)
        c.check(first.startswith(verdict), f"{name}: the comment's first line is {verdict}…", f"got {first!r}", job)
        c.check(f"head `{pr['head_sha'][:7]}`" in body, f"{name}: the comment names head {pr['head_sha'][:7]}",
                "no such commit line in the report", job)
        c.check(f"`{pr['head']}`" in body, f"{name}: the comment names the head branch {pr['head']}",
                next((ln for ln in body.splitlines() if ln.startswith("- Commits")), "no Commits line"), job)
        c.check(pr["merge_sha"][:7] not in body, f"{name}: the merge commit is not named", "", job)
        for text in contains:
            c.check(text in body, f"{name}: the comment says {text!r}", "", job)
        for text in not_contains:
            c.check(text not in body, f"{name}: the comment does not say {text!r}", "", job)
        return body


# --- the scenarios ---------------------------------------------------------------------------------


def scenario_pass(s):
    s.main()
    s.branch("feature-docs", {"README.md": "# shop\n\nA shop.\n"}, "docs: say what it is")
    pr = s.pull_request(1, "feature-docs", "main")
    job = s.pr_job(pr, "pass", inputs={"comment": "always"})
    s.expect(job, pr, exit_code=0, writes=[("POST", 201)], verdict="✅ **passed")
    s.c.check("passed" in job.summary, "pass: the job summary has the report", job=job)
    s.c.check("coldgate ab -c coldgate.yaml --head " in job.text() and "--allow-no-baseline" not in job.text(),
              "pass: coldgate ab gets --head and no --allow-no-baseline by default", job=job)
    # A second push to the same pull request: the same comment is updated.
    s.branch("feature-docs", {"README.md": "# shop\n\nA small shop.\n"}, "docs: small", parent="feature-docs")
    pr = s.pull_request(1, "feature-docs", "main")
    job = s.pr_job(pr, "pass, second push", inputs={"comment": "always"})
    s.expect(job, pr, exit_code=0, writes=[("PATCH", 200)], verdict="✅ **passed")


def scenario_regression(s):
    s.main()
    s.branch("feature-slow", {"stage.sql": SLOW}, "load: 20x slower")
    pr = s.pull_request(1, "feature-slow", "main")
    job = s.pr_job(pr, "regression")  # the workflow's comment: on-change
    s.expect(job, pr, exit_code=1, writes=[("POST", 201)], verdict="❌ **failed",
             contains=["regression (load query_ms"])
    s.c.check("base: cold run" in job.text(), "regression: base and head measured interleaved", job=job)


def scenario_snapshot(s):
    s.main()
    s.branch("feature-rename", {"items.sql": ITEMS.format(word="article")}, "items: articles")
    pr = s.pull_request(1, "feature-rename", "main")
    job = s.pr_job(pr, "changed snapshot")
    s.expect(job, pr, exit_code=1, writes=[("POST", 201)], verdict="❌ **failed",
             contains=["1 snapshot changed (items)"])
    candidates = list((s.artifact(job) / "snapshots").rglob("*")) if (s.artifact(job) / "snapshots").is_dir() else []
    s.c.check(any(p.is_file() for p in candidates), "changed snapshot: the candidate is in the artifact",
              f"{candidates}", job)


def scenario_config_error(s):
    s.main()
    s.branch("feature-typo", {"coldgate.yaml": CONFIG.replace("runs: 3", "runz: 3")}, "config: a typo")
    pr = s.pull_request(1, "feature-typo", "main")
    job = s.pr_job(pr, "config error")
    s.expect(job, pr, exit_code=2, writes=[], verdict=None)
    s.c.check(not s.comment_of(pr), "config error: no comment", job=job)
    comment = s.step(job, "Comment on the pull request")
    s.c.check(comment is not None and comment.outcome == "skipped", "config error: the comment step is skipped (no report)",
              f"{comment and comment.outcome}", job)
    s.c.check(not (s.artifact(job) / "report.md").exists(), "config error: no report.md", job=job)
    s.c.check("unknown key 'runz'" in job.text(), "config error: the log has coldgate's message", job=job)
    s.c.check("usage or config error" in job.text(), "config error: the verdict step says what exit 2 is", job=job)


def scenario_shallow(s):
    s.main()
    s.branch("feature-slow", {"stage.sql": SLOW}, "load: 20x slower")
    pr = s.pull_request(1, "feature-slow", "main")
    # actions/checkout's default: depth 1 of refs/pull/1/merge, no other branch.
    job = s.pr_job(pr, "shallow", checkout={"fetch-depth": 1})
    s.expect(job, pr, exit_code=1, writes=[("POST", 201)], verdict="❌ **failed",
             contains=["regression (load query_ms"])
    s.c.check("the checkout is shallow" in job.text() and "git fetch --unshallow origin" in job.text(),
              "shallow: the log says what is fetched", job=job)


def scenario_shallow_no_base(s):
    s.main()
    s.branch("feature-docs", {"README.md": "# shop\n\nA shop.\n"}, "docs: say what it is")
    pr = s.pull_request(1, "feature-docs", "main")
    gone = s.origin.bare.with_name("origin.git.unreachable")

    def origin_unreachable(job):
        s.origin.bare.rename(gone)  # what was checked out is all there is

    try:
        checkout = {"fetch-depth": 1, "ref": pr["head_sha"]}
        job = s.pr_job(pr, "shallow, base unreachable", checkout=checkout, after_checkout=origin_unreachable)
        gone.rename(s.origin.bare)
        s.expect(job, pr, exit_code=3, writes=[("POST", 201)], verdict="⚠️ **no baseline")
        s.c.check(any("git fetch" in w for w in job.warnings()), "shallow, base unreachable: the failed fetch is a warning",
                  f"{job.warnings()}", job)
        job = s.pr_job(pr, "shallow, base unreachable, allow-no-baseline", inputs={"allow-no-baseline": True},
                       checkout=checkout, after_checkout=origin_unreachable)
        gone.rename(s.origin.bare)
        s.expect(job, pr, exit_code=0, writes=[("PATCH", 200)], verdict="⚠️ **no baseline")
    finally:
        if gone.exists():
            gone.rename(s.origin.bare)


def scenario_fork(s):
    s.main()
    s.branch("feature-docs", {"README.md": "# shop\n\nA shop.\n"}, "docs: say what it is")
    s.branch("feature-slow", {"stage.sql": SLOW}, "load: 20x slower")
    pr = s.pull_request(1, "feature-docs", "main", fork=True)
    job = s.pr_job(pr, "fork, passing", inputs={"comment": "always"})
    s.expect(job, pr, exit_code=0, writes=[("POST", 403)], verdict=None)
    s.c.check(any("read-only" in w for w in job.warnings()), "fork, passing: a warning says the token is read-only",
              f"{job.warnings()}", job)
    s.c.check(not s.comment_of(pr), "fork, passing: nothing was posted", job=job)
    follow = s.comment_job(job, pr, "fork, passing: comment workflow")
    s.c.check(follow.exit_code == 0 and s.writes(follow) == [], "fork, passing: the comment workflow posts no new comment "
              "while the gate passes (on-change)", f"exit {follow.exit_code}, {s.writes(follow)}", follow)

    pr = s.pull_request(2, "feature-slow", "main", fork=True)
    job = s.pr_job(pr, "fork, regression")
    s.expect(job, pr, exit_code=1, writes=[("POST", 403)], verdict=None)
    follow = s.comment_job(job, pr, "fork, regression: comment workflow")
    s.c.check(follow.exit_code == 0, "fork, regression: the comment workflow passes", f"exit {follow.exit_code}", follow)
    s.c.check(s.writes(follow) == [("POST", 201)], "fork, regression: the comment workflow posts the report",
              f"{s.writes(follow)}", follow)
    comments = s.comment_of(pr)
    first = verdict_line(comments[0]["body"]) if comments else ""
    s.c.check(first.startswith("❌ **failed") and "regression" in first,
              "fork, regression: the comment's first line is the regression", f"{first!r}", follow)
    # A forged pr-number (pull request 1) is refused: that pull request's head is another commit.
    (s.artifact(job) / "pr-number").write_text("1\n")
    forged = s.comment_job(job, pr, "fork, forged pr-number: comment workflow")
    s.c.check(forged.exit_code == 0 and s.writes(forged) == [] and not s.comment_of(s.pulls[1]),
              "fork, forged pr-number: nothing is posted", f"{s.writes(forged)}", forged)
    s.c.check(any("not commenting" in w for w in forged.warnings()), "fork, forged pr-number: a warning says why",
              f"{forged.warnings()}", forged)


def scenario_ownership(s):
    if os.geteuid() != 0:
        raise Skip("ownership needs root: the workspace is chowned to uid 4242 while the job runs as root")
    s.main()
    s.branch("feature-slow", {"stage.sql": SLOW}, "load: 20x slower")
    pr = s.pull_request(1, "feature-slow", "main")

    def runner_user_owns_it(job):
        # A `container:` job: the runner's user (not root) checked the workspace out.
        subprocess.run(["chown", "-R", "4242:4242", str(job.workspace)], check=True)

    job = s.pr_job(pr, "container ownership", after_checkout=runner_user_owns_it)
    s.c.check(job.workspace.stat().st_uid == 4242, "container ownership: the workspace belongs to uid 4242", job=job)
    s.expect(job, pr, exit_code=1, writes=[("POST", 201)], verdict="❌ **failed",
             contains=["regression (load query_ms"])
    safe = git(job.workspace, "config", "--global", "--get-all", "safe.directory",
               env={"HOME": str(job.home), "PATH": "/usr/bin:/bin"}, check=False).splitlines()
    s.c.check(safe == [str(job.workspace)], "container ownership: safe.directory is the workspace alone",
              f"{safe}", job)
    s.c.check("dubious ownership" not in job.text(), "container ownership: git never refused the workspace", job=job)


def scenario_stack(s):
    s.main()
    f1 = s.branch("feature-1", {"stage.sql": SLOW}, "feature-1: load 20x slower")
    f2 = s.branch("feature-2", {"stage.sql": FAST}, "feature-2: load fast again", parent="feature-1")
    s.branch("feature-3", {"README.md": "# shop\n\nStacked.\n"}, "feature-3: docs", parent="feature-2")
    # The record recipe on the push of each branch of the stack.
    for branch in ("feature-1", "feature-2", "feature-3"):
        sha = s.origin.tip(branch)
        job = s.push_job(branch, f"record {branch}")
        s.c.check(job.exit_code == 0 and s.output(job) == "0", f"record {branch}: passes",
                  f"exit {job.exit_code}, output {s.output(job)!r}", job)
        s.c.check(s.writes(job) == [], f"record {branch}: comments nothing", f"{s.writes(job)}", job)
        saved = [e for e in s.h.cache.entries if e["scope"] == f"refs/heads/{branch}" and e["key"].endswith("-" + sha)]
        s.c.check(len(saved) == 1, f"record {branch}: its results are cached in the branch's scope under its sha",
                  f"{[(e['scope'], e['key']) for e in s.h.cache.entries]}", job)
        files = [p.name for e in saved for p in Path(e["dir"]).rglob("*.json")]
        s.c.check(any(f.startswith(sha + "-") for f in files), f"record {branch}: the entry holds {sha[:7]}'s results",
                  f"{files}", job)

    pr1 = s.pull_request(1, "feature-1", "main")
    pr2 = s.pull_request(2, "feature-2", "feature-1")
    pr3 = s.pull_request(3, "feature-3", "feature-2")
    job = s.pr_job(pr1, "PR1 feature-1 → main", inputs={"comment": "always"})
    s.expect(job, pr1, exit_code=1, writes=[("POST", 201)], verdict="❌ **failed",
             contains=["regression (load query_ms"], not_contains=["base from cache"])
    s.c.check("base: cold run" in job.text(), "PR1: main (never recorded) is measured interleaved", job=job)

    job = s.pr_job(pr2, "PR2 feature-2 → feature-1", inputs={"comment": "always"})
    s.expect(job, pr2, exit_code=0, writes=[("POST", 201)], verdict="✅ **passed",
             contains=["base from cache", "faster"])
    s.c.check(f"restored from key coldgate-ab-Linux-" in job.text() and f"-{f1} (refs/heads/feature-1)" in job.text(),
              "PR2: the cache step restores feature-1's recorded entry", job=job)
    s.c.check("from the cache" in job.text(), "PR2: coldgate says the base came from the cache", job=job)
    s.c.check("base: cold run" not in job.text(), "PR2: the base is not measured again", job=job)

    # cache: false measures both sides interleaved however the cache stands.
    job = s.pr_job(pr2, "PR2 again with cache: false", inputs={"comment": "always", "cache": False})
    s.expect(job, pr2, exit_code=0, writes=[("PATCH", 200)], verdict="✅ **passed",
             contains=["faster"], not_contains=["base from cache"])
    s.c.check("--no-cache" in job.text() and "base: cold run" in job.text() and "from the cache" not in job.text(),
              "PR2 with cache: false: coldgate ab --no-cache measures the base interleaved", job=job)
    cache_step = s.step(job, "Cache the results")
    s.c.check(cache_step is not None and cache_step.outcome == "skipped", "PR2 with cache: false: no cache step",
              f"{cache_step and cache_step.outcome}", job)

    job = s.pr_job(pr3, "PR3 feature-3 → feature-2", inputs={"comment": "always"})
    s.expect(job, pr3, exit_code=0, writes=[("POST", 201)], verdict="✅ **passed", contains=["base from cache"])
    s.c.check(f"-{f2} (refs/heads/feature-2)" in job.text() and "base: cold run" not in job.text(),
              "PR3: the base comes from feature-2's recorded entry", job=job)


def scenario_stack_pr(s):
    """coldgate-stack.yml for main ← feature-1 ← feature-2 ← feature-3, on a push to the top
    pull request: coldgate stack finds the stack from the fake API's open pull requests,
    measures it in one run and comments on each pull request its own report."""
    c = s.c
    s.main()
    s.branch("feature-1", {"stage.sql": SLOW}, "feature-1: load 20x slower")
    s.branch("feature-2", {"stage.sql": FAST}, "feature-2: load fast again", parent="feature-1")
    s.branch("feature-3", {"items.sql": ITEMS.format(word="article")}, "feature-3: items are articles",
             parent="feature-2")
    titles = {1: "Slow load", 2: "Fast load again", 3: "Articles"}
    pr1 = s.pull_request(1, "feature-1", "main", title=titles[1])
    pr2 = s.pull_request(2, "feature-2", "feature-1", title=titles[2])
    pr3 = s.pull_request(3, "feature-3", "feature-2", title=titles[3])
    # What each pull request's own report says first, and then somewhere.
    expected = {1: ("❌ **failed", "regression (load query_ms"), 2: ("✅ **passed", "faster"),
                3: ("❌ **failed", "1 snapshot changed (items)")}

    def commented(label, job, pulls):
        """Each pull request of the stack has one coldgate comment: its own report of this run
        with the line linking the run's stack summary."""
        summary_url = f"https://github.com/{s.h.repository}/actions/runs/{job.run_id}"
        folders = sorted(p.parent for p in (s.artifact(job) / "stack").glob("*/report.md"))
        c.check([f.name for f in folders] == [f"{k}-origin-{pr['head']}" for k, pr in enumerate(pulls, 1)],
                f"{label}: the artifact has a report per pull request under stack/<k>-origin-<branch>/",
                f"{[f.name for f in folders]}", job)
        for k, pr in enumerate(pulls, 1):
            comments = s.comment_of(pr)
            c.check(len(comments) == 1, f"{label}: PR{k} has exactly one coldgate comment",
                    f"{len(comments)} comments: {[x['id'] for x in comments]}", job)
            if not comments:
                continue
            body = comments[0]["body"]
            verdict, says = expected[k]
            c.check(verdict_line(body).startswith(verdict), f"{label}: PR{k}'s comment's first line is {verdict}…",
                    f"got {verdict_line(body)!r}", job)
            c.check(says in body, f"{label}: PR{k}'s comment says {says!r}", "", job)
            c.check(f"`{pr['head_sha'][:7]}`" in body, f"{label}: PR{k}'s comment names its head {pr['head_sha'][:7]}",
                    "", job)
            report = folders[k - 1] / "report.md" if len(folders) >= k else None
            text = report.read_text().strip() if report else ""
            c.check(text and text in body, f"{label}: PR{k}'s comment is its report from the artifact "
                    f"({report.parent.name if report else 'none'})", "the report is not in the comment body", job)
            line = f"Pull request {k} of 3 in this stack: [stack summary]({summary_url})"
            c.check(line in body.splitlines(), f"{label}: PR{k}'s comment links this run's stack summary",
                    next((ln for ln in body.splitlines() if "in this stack" in ln), "no such line"), job)

    def summarized(label, job):
        summary = s.artifact(job) / "stack" / "summary.md"
        text = summary.read_text() if summary.is_file() else ""
        c.check(summary.is_file(), f"{label}: the artifact holds coldgate-out/stack/summary.md", "", job)
        c.check(text.splitlines()[2:3] and text.splitlines()[2].startswith("❌ **2 of 3 pull requests fail the gate**"),
                f"{label}: the summary says 2 of 3 pull requests fail", f"{text.splitlines()[:3]}", job)
        for number, title in titles.items():
            c.check(f"[#{number}](<https://github.com/{s.h.repository}/pull/{number}>) {title}" in text,
                    f"{label}: the summary names #{number} {title} with its link", "", job)

    # A push to the top of the stack: the whole stack is measured, each pull request commented.
    job = s.stack_job(pr3, "stack on PR3's push")
    c.check(job.exit_code == 1 and s.output(job) == "1", "stack on PR3's push: the job fails with exit 1 (the gate)",
            f"job {job.conclusion}, exit {job.exit_code}, output {s.output(job)!r}, first failure {job.first_failure}", job)
    c.check("coldgate stack --github -c coldgate.yaml --comment" in job.text(),
            "stack on PR3's push: the action runs coldgate stack --github --comment", "", job)
    got = s.writes(job)
    c.check(got == [("POST", 201)] * 3, "stack on PR3's push: three comments posted", f"{got}", job)
    reads = [path for method, path, _ in s.api.requests[job.api_mark:] if method == "GET"]
    c.check(f"/repos/{s.h.repository}" in reads and f"/repos/{s.h.repository}/pulls?state=open&per_page=100" in reads,
            "stack on PR3's push: coldgate read the default branch and the open pull requests", f"{reads}", job)
    commented("stack on PR3's push", job, [pr1, pr2, pr3])
    summarized("stack on PR3's push", job)
    first_ids = {pr["number"]: [x["id"] for x in s.comment_of(pr)] for pr in (pr1, pr2, pr3)}

    # A new push to feature-3, checked out at actions/checkout's default depth: the action fetches
    # the history and every branch of the stack itself, and the same three comments are updated,
    # none added.
    s.branch("feature-3", {"README.md": "# shop\n\nArticles.\n"}, "feature-3: docs", parent="feature-3")
    pr3 = s.pull_request(3, "feature-3", "feature-2", title=titles[3])
    label = "stack on PR3's second push, shallow checkout"
    job = s.stack_job(pr3, label, checkout={"fetch-depth": 1})
    c.check("fetching the history and the branches of the stack" in job.text()
            and "coldgate action: git fetch" not in job.text(),
            f"{label}: the action unshallows and fetches the stack's branches", "", job)
    c.check(job.exit_code == 1 and s.output(job) == "1", f"{label}: the job fails with exit 1",
            f"job {job.conclusion}, exit {job.exit_code}, first failure {job.first_failure}", job)
    got = s.writes(job)
    c.check(got == [("PATCH", 200)] * 3, f"{label}: the three comments updated, none posted", f"{got}", job)
    c.check({pr["number"]: [x["id"] for x in s.comment_of(pr)] for pr in (pr1, pr2, pr3)} == first_ids,
            f"{label}: the same comment on each pull request", "", job)
    commented(label, job, [pr1, pr2, pr3])
    summarized(label, job)

    # feature-1's own pull request against main: not this workflow's (coldgate.yml measures it).
    mark = len(s.api.requests)
    job = s.stack_job(pr1, "stack on PR1 (against main)")
    c.check(job.skipped and job.scope is None, "stack on PR1 (against main): the job is skipped by its if:",
            f"skipped {job.skipped}", job)
    c.check(s.api.requests[mark:] == [], "stack on PR1 (against main): no API request", f"{s.api.requests[mark:]}", job)


def scenario_package(s):
    """The action's `package` input in the workflow's own container (debian:bookworm): the
    .deb is installed with apt-get, with what it recommends, from Debian's mirror, and the
    installed coldgate measures; nothing is compiled (the harness fails a step that compiles)
    and the binary cache is not used. A path in the workspace, then a URL, then a missing file."""
    if os.geteuid() != 0:
        raise Skip("package needs root: podman runs the job's container")
    if not s.package or not Path(s.package).is_file():
        raise HarnessError(f"the package scenario needs --package FILE.deb (got {s.package!r})")
    deb = Path(s.package).resolve()
    field = lambda name: subprocess.run(["dpkg-deb", "-f", str(deb), name], check=True,
                                        stdout=subprocess.PIPE, text=True).stdout.strip()
    version = field("Version")
    s.c.check(field("Package") == "coldgate" and deb.name == f"coldgate_{version}_amd64.deb",
              f"the package is coldgate_{version}_amd64.deb", deb.name)
    # dpkg-shlibdeps names the libraries as the distribution that built it does (libpqxx-6.4 and
    # libyaml-cpp0.7 on Debian 12, libpqxx-7.10 and libyaml-cpp0.8 on Debian 13).
    s.c.check("libpqxx-" in field("Depends") and "libyaml-cpp0." in field("Depends"),
              "its Depends come from the binary's libraries (dpkg-shlibdeps)", field("Depends"))
    s.c.check(field("Recommends") == "postgresql, postgresql-client, git, python3-psycopg2, libjs-chart.js",
              "it recommends the distribution's PostgreSQL (no pinned major), psql, git, psycopg2 and Chart.js",
              field("Recommends"))

    s.main()
    s.branch("feature-docs", {"README.md": "# shop\n\nA shop.\n"}, "docs: say what it is")
    pr = s.pull_request(1, "feature-docs", "main")

    def the_package_in_the_workspace(job):  # as a step that downloads a release would leave it
        (job.workspace / "dist").mkdir()
        shutil.copy2(deb, job.workspace / "dist" / deb.name)

    def installed(job, label):
        install = s.step(job, "Install coldgate")
        log = install.log if install else ""
        s.c.check(f"coldgate: /usr/bin/coldgate from the package coldgate {version}" in log
                  and f"coldgate {version}" in log.splitlines(),
                  f"{label}: the action installed the package and runs /usr/bin/coldgate", log[-800:], job)
        cache = s.step(job, "Cache the coldgate binary")
        s.c.check(cache is not None and cache.outcome == "skipped", f"{label}: the binary cache is not used",
                  f"{cache and cache.outcome}", job)
        s.c.check("container debian:bookworm" in job.text(), f"{label}: the job ran in its container", job=job)

    job = s.pr_job(pr, "package from the workspace", inputs={"comment": "always", "package": f"dist/{deb.name}"},
                   after_checkout=the_package_in_the_workspace)
    s.expect(job, pr, exit_code=0, writes=[("POST", 201)], verdict="✅ **passed")
    installed(job, "package from the workspace")

    # From a URL (a release asset): the action downloads it with curl, which it installs first.
    handler = functools.partial(QuietHandler, directory=str(deb.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{deb.name}"
        job = s.pr_job(pr, "package from a URL", inputs={"comment": "always", "package": url})
    finally:
        server.shutdown()
        server.server_close()
    s.expect(job, pr, exit_code=0, writes=[("PATCH", 200)], verdict="✅ **passed")
    installed(job, "package from a URL")
    s.c.check(f"coldgate: downloading {url}" in job.text(), "package from a URL: the log says what is downloaded", job=job)

    job = s.pr_job(pr, "package missing", inputs={"package": "dist/nothing.deb"})
    s.c.check(job.exit_code == 2 and job.first_failure == ("Install coldgate", 2),
              "package missing: the job fails with exit 2 in the action's install step",
              f"exit {job.exit_code}, first failure {job.first_failure}", job)
    errors = [m for level, m in job.annotations if level == "error"]
    s.c.check(f"coldgate action: input package: no file dist/nothing.deb (relative to {job.workspace}); "
              "give the .deb that ci/package.sh makes, or its URL" in errors,
              "package missing: one error names the input, the file and what to give", f"{errors}", job)


HISTORY = "coldgate-history"  # the history store's branch on origin (history.store's default)

# The pushes to main of the history scenario, in order: path → text, and the subject.
HISTORY_PUSHES = [
    ({"README.md": "# shop\n\nA shop.\n"}, "docs: say what it is"),
    ({"README.md": "# shop\n\nA small shop.\n"}, "docs: small"),
    ({"items.sql": ITEMS.format(word="item") + "-- three items\n"}, "items: say how many"),
]


def page_data(html):
    """The records a history page shows: its <script type="application/json" id="coldgate-data">."""
    start = html.find('<script type="application/json" id="coldgate-data">')
    if start < 0:
        return None
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def pre_push_rendezvous(folder, me, other):
    """A pre-push hook for one of two jobs' checkouts that makes their pushes of the history
    race for certain: the first push of each waits until the other's has come as far — both
    fetched the store's tip and built a record on it — and only then do both push, so one of
    them is refused (the remote's branch moved) and `history record --push` retries it. Every
    push through the hook adds a line to `folder`/pushes. No timing decides anything: the wait
    gives up only after 5 minutes, when the other job never gets there (the scenario then
    fails on the count)."""
    return f"""#!/bin/sh
echo "{me}" >> "{folder}/pushes"
[ -e "{folder}/{me}.arrived" ] && exit 0
: > "{folder}/{me}.arrived"
i=0
while [ ! -e "{folder}/{other}.arrived" ] && [ "$i" -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
exit 0
"""


def scenario_history(s):
    """ci/github/coldgate-history.yml on pushes to main, each replayed as GitHub runs it: the job
    `record` (checkout, the action with mode: run and base: history, `history record --push`,
    `history page`, actions/upload-pages-artifact), then the job `deploy` of the same run
    (needs: record, actions/deploy-pages). The first push has no record yet; later ones are
    gated against the store's median; two pushes race; a 20× slower stage is a regression that
    is recorded and published all the same; a pull request is then measured as before (ab),
    its report drawing the trend of main's records."""
    c = s.c
    origin = s.origin
    pushed = []   # (sha, subject) of main's commits, oldest first: each must have its record

    def store_files():
        return sorted(origin.bare_git("ls-tree", "--name-only", HISTORY, check=False).splitlines())

    def record_of(sha):
        text = origin.bare_git("show", f"{HISTORY}:{sha}.json", check=False)
        return json.loads(text) if text else {}

    def page_html(run_id):
        tar = s.h.artifacts.folder(run_id, "github-pages") / "artifact.tar"
        if not tar.is_file():
            return None
        with tarfile.open(tar) as t:
            try:
                return t.extractfile("./index.html").read().decode()
            except KeyError:
                return None

    def base_line(used):
        """The report's line for a base from the history: `used` are the commits, oldest first."""
        first, last = f"`{used[0][:7]}`", f"`{used[-1][:7]}`"
        what = (f"the recorded result" if len(used) == 1 else f"the median of {len(used)} recorded results")
        span = first if len(used) == 1 else f"{first} … {last}"
        short = f"; only {len(used)} of 5 asked were found" if len(used) < 5 else ""
        return f"ℹ️ base: {what} of `main` in `git:{HISTORY}` ({span}{short}), not measured in this run"

    def store_is_linear(label, job):
        commits = origin.bare_git("rev-list", HISTORY, check=False).splitlines()
        merges = origin.bare_git("rev-list", "--merges", HISTORY, check=False).splitlines()
        added = [origin.bare_git("diff-tree", "--root", "--no-commit-id", "--name-only", "-r", commit).splitlines()
                 for commit in commits]
        c.check(len(commits) == len(pushed) and not merges and all(len(a) == 1 for a in added),
                f"{label}: origin's {HISTORY} is linear, one commit per record, each adding one file",
                f"{len(commits)} commits for {len(pushed)} records, merges {merges}, files per commit {added}", job)
        c.check(origin.bare_git("rev-parse", "refs/heads/main") == pushed[-1][0],
                f"{label}: main on origin is still the pushed commit (the job pushed only the history)", "", job)

    def recorded(label, job, sha, *, exit_code, regressions=()):
        c.check(job.exit_code == exit_code and s.output(job) == str(exit_code),
                f"{label}: the record job " + (f"fails with exit {exit_code}" if exit_code else "passes"),
                f"job {job.conclusion}, exit {job.exit_code}, output {s.output(job)!r}, "
                f"first failure {job.first_failure}", job)
        step = s.job_step(job, "Record the results")
        c.check(step is not None and step.outcome == "success", f"{label}: `coldgate history record --push` ran and passed",
                f"{step and step.outcome}", job)
        c.check(store_files() == sorted(f"{p}.json" for p, _ in pushed),
                f"{label}: origin's {HISTORY} holds one <commit>.json per pushed commit ({len(pushed)})",
                f"{store_files()}", job)
        rec = record_of(sha)
        c.check(rec.get("commit") == sha and rec.get("branch") == "main",
                f"{label}: {sha[:7]}.json is the record of {sha[:7]} on main",
                f"commit {rec.get('commit')}, branch {rec.get('branch')}", job)
        c.check(rec.get("ci_run_url") == f"https://github.com/{s.h.repository}/actions/runs/{job.run_id}",
                f"{label}: the record names its CI run", f"{rec.get('ci_run_url')!r}", job)
        got = {st["name"]: st["regressions"] for st in rec.get("stages", [])}
        want = {"load": list(regressions), "items": []}
        c.check(got == want, f"{label}: the record's regressions are {want}", f"{got}", job)

    def published(label, record, deploy, sha):
        c.check(record.outputs == {"page": "true"}, f"{label}: the record job's output page is true",
                f"{record.outputs}", record)
        html = page_html(record.run_id)
        c.check(html is not None, f"{label}: the github-pages artifact (artifact.tar) holds index.html",
                f"{sorted(p.name for p in s.h.artifacts.folder(record.run_id, 'github-pages').rglob('*'))}", record)
        data = page_data(html or "") or {}
        shas = [commit["sha"] for commit in data.get("commits", [])]
        c.check(sha in shas and set(shas) <= {p for p, _ in pushed},
                f"{label}: the page names {sha[:7]}, and only recorded commits", f"{shas}", record)
        c.check(deploy.result == "success" and s.h.pages and s.h.pages[-1]["run_id"] == record.run_id,
                f"{label}: the deploy job (needs: record) publishes this run's page",
                f"deploy {deploy.result}, first failure {deploy.first_failure}", deploy)
        owner, repo = s.h.repository.split("/")
        c.check(deploy.environment == {"name": "github-pages", "url": f"https://{owner}.github.io/{repo}/"},
                f"{label}: the deploy job's environment is github-pages at the page's URL", f"{deploy.environment}", deploy)
        site = s.h.pages[-1]["site"] / "index.html" if s.h.pages else None
        c.check(site is not None and site.is_file() and site.read_text() == html,
                f"{label}: what Pages serves is the page the record job wrote", "", deploy)
        return data

    # 1. The first push: nothing recorded yet.
    sha = s.main()
    pushed.append((sha, "shop: a stage and a snapshot"))
    record = s.history_record("push 1", sha)
    deploy = s.history_deploy(record)
    recorded("push 1", record, sha, exit_code=0)
    c.check("coldgate run -c coldgate.yaml --baseline history --allow-no-baseline" in record.text(),
            "push 1: the action runs coldgate run --baseline history --allow-no-baseline", job=record)
    c.check(f"no recorded results in git:{HISTORY}" in record.text() and "head runs alone" in record.text(),
            "push 1: coldgate says nothing is recorded yet and head runs alone", job=record)
    published("push 1", record, deploy, sha)
    store_is_linear("push 1", record)

    # 2-4. Each later push is gated against the median of what is recorded before it.
    for n, (files, subject) in enumerate(HISTORY_PUSHES, start=2):
        label = f"push {n}"
        sha = origin.commit("main", files, subject)
        pushed.append((sha, subject))
        record = s.history_record(label, sha)
        deploy = s.history_deploy(record)
        recorded(label, record, sha, exit_code=0)
        before = n - 1
        c.check(base_line([p for p, _ in pushed[:-1]]) in s.report(record).splitlines(),
                f"{label}: the report says the base is the {before} record(s) before it (their median)",
                next((ln for ln in s.report(record).splitlines() if "base:" in ln), "no base: line"), record)
        results = json.loads((s.artifact(record) / "results.json").read_text())
        used = [h.get("commit") for h in (results.get("history") or {}).get("commits", [])]
        c.check(results.get("gate", {}).get("base_source") == "history" and sorted(used) == sorted(p for p, _ in pushed[:-1]),
                f"{label}: results.json's base is the history of the {before} commits before it",
                f"base_source {results.get('gate', {}).get('base_source')!r}, commits {used}", record)
        data = published(label, record, deploy, sha)
        c.check([(commit["sha"], commit["subject"]) for commit in data.get("commits", [])] == pushed,
                f"{label}: the page has every record (commit and subject), in main's order",
                f"{data.get('commits')}", record)
        store_is_linear(label, record)

    # 5-6. Two pushes whose history jobs run at once: both records land, whoever pushes first.
    race = []
    for files, subject in (({"README.md": "# shop\n\nRace A.\n"}, "docs: race a"),
                           ({"README.md": "# shop\n\nRace B.\n"}, "docs: race b")):
        race.append((origin.commit("main", files, subject), subject))
    rendezvous = s.h.root / "rendezvous"
    rendezvous.mkdir()
    jobs = {}
    errors = []

    def racer(index):
        me, other = f"race-{index}", f"race-{1 - index}"

        def hook(job):
            path = job.workspace / ".git" / "hooks" / "pre-push"
            path.write_text(pre_push_rendezvous(rendezvous, me, other))
            path.chmod(0o755)
        try:
            jobs[index] = s.history_record(f"push {5 + index}", race[index][0], after_checkout=hook)
        except BaseException as e:  # re-raised in the scenario's thread
            errors.append(e)

    threads = [threading.Thread(target=racer, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    pushed.extend(race)
    for index, (sha, _) in enumerate(race):
        recorded(f"push {5 + index} (racing)", jobs[index], sha, exit_code=0)
    pushes = (rendezvous / "pushes").read_text().split() if (rendezvous / "pushes").exists() else []
    c.check(sorted(pushes.count(racer) for racer in ("race-0", "race-1")) == [1, 2] and len(pushes) == 3,
            "pushes 5 and 6: both built on the same tip, so one push was refused and retried (3 pushes in all)",
            f"pushes through the hook: {pushes}", jobs.get(0))
    store_is_linear("pushes 5 and 6", jobs.get(0))
    # The deployments of one concurrency group run one after the other.
    for index, (sha, _) in enumerate(race):
        published(f"push {5 + index} (racing)", jobs[index], s.history_deploy(jobs[index]), sha)

    # 7. A 20× slower stage: a regression against the history, recorded and published all the same.
    sha = origin.commit("main", {"stage.sql": SLOW}, "load: 20x slower")
    pushed.append((sha, "load: 20x slower"))
    record = s.history_record("push 7, a regression", sha)
    deploy = s.history_deploy(record)
    recorded("push 7, a regression", record, sha, exit_code=1, regressions=["query_ms"])
    c.check(record.first_failure is not None and record.first_failure[1] == 1
            and s.step(record, "Verdict").outcome == "failure",
            "push 7, a regression: the action's Verdict step fails the job with exit 1", f"{record.first_failure}", record)
    c.check("regression (load query_ms" in s.report(record)
            and base_line([p for p, _ in pushed[-6:-1]]) in s.report(record).splitlines(),
            "push 7, a regression: the report says load's query_ms regressed against the median of the 5 records "
            "before it", next((ln for ln in s.report(record).splitlines() if "base:" in ln), "no base: line"), record)
    data = published("push 7, a regression", record, deploy, sha)
    newest = (data.get("commits") or [{}])[-1]
    c.check(newest.get("sha") == sha and newest.get("regressions") == ["load: query_ms"],
            "push 7, a regression: the page marks load: query_ms on the newest commit", f"{newest}", record)
    c.check(len(data.get("commits", [])) == len(pushed), f"push 7, a regression: the page shows all {len(pushed)} records",
            f"{[commit['sha'][:7] for commit in data.get('commits', [])]}", record)
    store_is_linear("push 7, a regression", record)

    # 8. A pull request once the history exists: coldgate.yml measures it as always (ab), and
    #    its report shows the trend.
    tip = origin.bare_git("rev-parse", HISTORY)
    s.branch("feature-docs", {"README.md": "# shop\n\nA slow shop.\n"}, "docs: say it is slow")
    pr = s.pull_request(1, "feature-docs", "main")
    job = s.pr_job(pr, "pull request", inputs={"comment": "always"})
    s.expect(job, pr, exit_code=0, writes=[("POST", 201)], verdict="✅ **passed")
    c.check("base: cold run" in job.text(), "pull request: base and head are measured interleaved (mode ab)", job=job)
    # ab draws main's last 5 records up to the base commit (push 7's own the newest), then head.
    axis = "x-axis [" + ", ".join(f'"{p[:7]}"' for p, _ in pushed[-5:]) + ', "this run"]'
    report = s.report(job)
    c.check("<summary>Trend: 5 recorded commits of main and this run (head)</summary>" in report
            and f"    {axis}" in report.splitlines(),
            "pull request: the report draws the trend of main's last 5 records, then this run",
            next((ln.strip() for ln in report.splitlines() if "x-axis" in ln), "no trend"), job)
    c.check(origin.bare_git("rev-parse", HISTORY) == tip, f"pull request: {HISTORY} is not touched", job=job)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the package for the URL job; its request lines stay out of the scenario's log."""

    def log_message(self, format, *args):
        pass


SCENARIOS = {
    "pass": scenario_pass,
    "regression": scenario_regression,
    "snapshot": scenario_snapshot,
    "config-error": scenario_config_error,
    "shallow": scenario_shallow,
    "shallow-no-base": scenario_shallow_no_base,
    "fork": scenario_fork,
    "ownership": scenario_ownership,
    "stack": scenario_stack,
    "stack-pr": scenario_stack_pr,
    "history": scenario_history,
    "package": scenario_package,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--coldgate", help="the built coldgate binary")
    parser.add_argument("--scenario", required=True, help="a scenario, or 'list'")
    parser.add_argument("--package", help="the .deb for the package scenario")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.scenario == "list":
        print("\n".join(SCENARIOS))
        return 0
    if args.scenario not in SCENARIOS:
        print(f"action_harness: no scenario {args.scenario!r} ({', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if not args.coldgate or not os.access(args.coldgate, os.X_OK):
        print(f"action_harness: --coldgate {args.coldgate!r} is not an executable", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix=f"coldgate-action-{args.scenario}-"))
    os.chmod(root, 0o755)  # the local provider's server account walks through it
    api = FakeGitHub()
    checks = Checks()
    started = time.monotonic()
    code = 0
    try:
        images = None
        if args.scenario in IN_CONTAINERS:
            images = CONTAINER_IMAGES
            for local in images.values():
                if subprocess.run(["podman", "image", "exists", local]).returncode != 0:
                    raise HarnessError(f"no image {local}: bash ci/setup-podman.sh builds it")
        harness = Harness(root, SOURCE_DIR, Path(args.coldgate).resolve(), api, verbose=args.verbose,
                          container_images=images)
        print(f"scenario {args.scenario} in {root}", flush=True)
        scenario = Scenario(harness, checks)
        scenario.package = args.package
        SCENARIOS[args.scenario](scenario)
    except Skip as e:
        print(f"action_harness: skipped: {e}")
        code = 77
    except HarnessError as e:
        print(f"action_harness: cannot replay: {e}", file=sys.stderr)
        code = 2
    except Exception:
        traceback.print_exc()
        code = 2
    finally:
        api.close()
    for job in checks.jobs_to_show:
        print(f"\n──── log of job {job.name!r} (run {job.run_id}) ────")
        print(job.text())
    elapsed = time.monotonic() - started
    print(f"\nscenario {args.scenario}: {checks.passed} passed, {len(checks.failed)} failed ({elapsed:.0f} s)")
    for what in checks.failed:
        print(f"  failed: {what}")
    if args.keep:
        print(f"kept {root}")
    else:
        subprocess.run(["rm", "-rf", str(root)])
    if code:
        return code
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
