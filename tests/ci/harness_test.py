#!/usr/bin/python3
"""The action harness's own tests: that it evaluates expressions, runs steps, skips and fails
them, passes outputs, env and PATH on, scopes caches and checks out the way GitHub's runner
and actions do — so that a scenario of tests/ci/action_harness.py that passes means the action
works on GitHub. No PostgreSQL, no coldgate: a few seconds.

  /usr/bin/python3 tests/ci/harness_test.py [-v]
"""

import json
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from urllib.request import Request, urlopen

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.expressions import Evaluator, condition_tree, interpolate  # noqa: E402
from harness.fake_github import FakeGitHub  # noqa: E402
from harness.runner import Harness, HarnessError, Job, git, read_file_command, run_workflow_job  # noqa: E402


def evaluate(text, **contexts):
    return Evaluator(contexts, {"success": lambda: True, "failure": lambda: False,
                                "always": lambda: True}).evaluate(text)


class Expressions(unittest.TestCase):
    def test_literals_and_operators(self):
        self.assertEqual(evaluate("true && 'a'"), "a")          # && returns an operand
        self.assertEqual(evaluate("'' || 'default'"), "default")
        self.assertEqual(evaluate("null || 0 || 'x'"), "x")
        self.assertIs(evaluate("!''"), True)
        self.assertIs(evaluate("!(1 == 1)"), False)
        self.assertIs(evaluate("'AB' == 'ab'"), True)         # strings: case-insensitive
        self.assertIs(evaluate("1 == '1'"), True)             # coerced to numbers
        self.assertIs(evaluate("'0x10' == 16"), True)
        self.assertIs(evaluate("true == 1"), True)
        self.assertIs(evaluate("null == 0"), True)
        self.assertIs(evaluate("'abc' == 0"), False)          # NaN equals nothing
        self.assertIs(evaluate("2 > 10"), False)
        self.assertIs(evaluate("'it''s' == 'IT''S'"), True)
        self.assertEqual(evaluate("format('{0}-{1}', 'a', 2)"), "a-2")
        self.assertIs(evaluate("contains('Hello', 'ell')"), True)
        self.assertIs(evaluate("startsWith('refs/heads/x', 'refs/')"), True)

    def test_contexts(self):
        steps = {"measure": {"outputs": {"exit-code": "1"}, "outcome": "success"}}
        inputs = {"allow-no-baseline": "false", "mode": "ab"}
        self.assertEqual(evaluate("steps.measure.outputs.exit-code", steps=steps), "1")
        self.assertEqual(evaluate("steps.measure.outputs['exit-code']", steps=steps), "1")
        self.assertIsNone(evaluate("steps.missing.outputs.x", steps=steps))
        self.assertIs(evaluate("steps.missing.outputs.x != ''", steps=steps), False)  # null == ''
        self.assertIs(evaluate("inputs.mode == 'ab' && inputs.allow-no-baseline != 'false'", inputs=inputs), False)
        github = {"event": {"pull_request": {"head": {"sha": "abc"}}}, "sha": "merge"}
        self.assertEqual(evaluate("github.event.pull_request.head.sha || github.sha", github=github), "abc")
        self.assertEqual(evaluate("github.event.pull_request.head.sha || github.sha",
                                  github={"event": {}, "sha": "tip"}), "tip")

    def test_interpolation(self):
        ev = Evaluator({"inputs": {"config": "a.yaml", "n": 3.0, "t": True}})
        self.assertEqual(interpolate("-c ${{ inputs.config }} x${{inputs.n}} ${{ inputs.t }}", ev),
                         "-c a.yaml x3 true")
        self.assertEqual(interpolate("${{ 'a }} b' }}", ev), "a }} b")
        self.assertEqual(interpolate("${{ inputs.none }}", ev), "")

    def test_if_without_status_function_implies_success(self):
        self.assertEqual(condition_tree("inputs.mode == 'ab'")[:3], ("bin", "&&", ("call", "success", [])))
        self.assertEqual(condition_tree("${{ always() && x }}")[0:2], ("bin", "&&"))
        self.assertEqual(condition_tree("always()"), ("call", "always", []))
        ev_failed = Evaluator({"inputs": {"mode": "ab"}}, {"success": lambda: False, "failure": lambda: True})
        self.assertFalse(ev_failed.eval_node(condition_tree("inputs.mode == 'ab'")))
        self.assertTrue(ev_failed.eval_node(condition_tree("failure() && inputs.mode == 'ab'")))

    def test_file_commands(self):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "out"
            f.write_text("a=1\nb=x=y\nmulti<<EOF_1\nline 1\n\nline 3\nEOF_1\nc=\n")
            self.assertEqual(read_file_command(f), {"a": "1", "b": "x=y", "multi": "line 1\n\nline 3", "c": ""})


class FakeApi(unittest.TestCase):
    """What `coldgate stack --github` reads: the repository, then the open pull requests page by
    page, as GitHub serves them."""

    def setUp(self):
        self.api = FakeGitHub(page_size=2)
        self.api.add_token("t", False)

    def tearDown(self):
        self.api.close()

    def get(self, url):
        with urlopen(Request(url, headers={"Authorization": "Bearer t"})) as answer:
            return json.loads(answer.read()), answer.headers.get("Link")

    def test_repository_and_open_pulls_in_pages(self):
        self.api.add_repository("acme/shop", "main")
        for n, (head, base) in enumerate((("f1", "main"), ("f2", "f1"), ("f3", "f2")), start=1):
            self.api.add_pull("acme/shop", n, f"{n}" * 40, head, base, title=f"T{n}")
        self.api.add_pull("acme/shop", 4, "4" * 40, "patch", "main", head_repo="contributor/shop")
        self.api.add_pull("acme/shop", 3, "5" * 40, "f3", "f2", title="T3")  # a new push replaces it
        repo, _ = self.get(f"{self.api.url}/repos/acme/shop")
        self.assertEqual(repo["default_branch"], "main")
        first, link = self.get(f"{self.api.url}/repos/acme/shop/pulls?state=open&per_page=100")
        self.assertEqual([p["number"] for p in first], [1, 2])
        self.assertEqual(first[1]["head"], {"sha": "2" * 40, "ref": "f2", "repo": {"full_name": "acme/shop"}})
        self.assertEqual((first[1]["base"]["ref"], first[1]["title"], first[1]["html_url"]),
                         ("f1", "T2", "https://github.com/acme/shop/pull/2"))
        self.assertRegex(link, r'^<http://127\.0\.0\.1:\d+/repos/acme/shop/pulls\?state=open&per_page=2&page=2>; rel="next"$')
        second, link = self.get(link[1:link.index(">")])
        self.assertEqual([(p["number"], p["head"]["sha"][0], p["head"]["repo"]["full_name"]) for p in second],
                         [(3, "5", "acme/shop"), (4, "4", "contributor/shop")])
        self.assertIsNone(link)
        closed, _ = self.get(f"{self.api.url}/repos/acme/shop/pulls?state=closed")
        self.assertEqual(closed, [])
        with self.assertRaises(Exception) as unknown:
            self.get(f"{self.api.url}/repos/acme/other")
        self.assertEqual(unknown.exception.code, 404)


class Runner(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.api = FakeGitHub()
        self.h = Harness(self.tmp.name, Path(__file__).resolve().parents[2], "/bin/true", self.api)

    def tearDown(self):
        self.api.close()
        self.tmp.cleanup()

    def job(self, name="job", event_name="pull_request", ref="refs/pull/1/merge", base_ref="main", event=None):
        return Job(self.h, name, event_name=event_name, event=event or {}, ref=ref, sha="0" * 40,
                   base_ref=base_ref)

    def composite(self, steps, outputs=None):
        folder = Path(self.tmp.name) / "action"
        folder.mkdir(exist_ok=True)
        (folder / "action.yml").write_text(yaml.safe_dump({
            "name": "t", "inputs": {"word": {"description": "w", "default": "hi"}},
            "outputs": outputs or {}, "runs": {"using": "composite", "steps": steps}}))
        return folder

    def test_steps_as_the_runner_runs_them(self):
        run = lambda script, **kw: dict({"shell": "bash", "run": textwrap.dedent(script)}, **kw)
        steps = [
            run("""\
                echo "x=${{ inputs.word }}" >> "$GITHUB_OUTPUT"
                { echo 'multi<<EOF'; echo 'line 1'; echo 'line 2'; echo EOF; } >> "$GITHUB_OUTPUT"
                echo "FOO=bar" >> "$GITHUB_ENV"
                mkdir -p "$RUNNER_TEMP/bin"; printf '#!/bin/sh\\necho tool\\n' > "$RUNNER_TEMP/bin/tool"
                chmod +x "$RUNNER_TEMP/bin/tool"; echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
                """, id="a"),
            run("""\
                [[ "$FOO" == bar && "$(tool)" == tool && "$X" == hi ]]
                [[ "$CI" == true && "$GITHUB_ACTIONS" == true && -n "$GITHUB_ACTION_PATH" ]]
                [[ "$HOME" != /root && "$PWD" == "$GITHUB_WORKSPACE" ]]
                [[ "$MULTI" == $'line 1\\nline 2' ]]
                """, id="b", env={"X": "${{ steps.a.outputs.x }}", "MULTI": "${{ steps.a.outputs.multi }}"}),
            # GitHub's `bash --noprofile --norc -eo pipefail`: the first failing command ends it.
            run("""\
                sh -c 'exit 4'
                echo "after=1" >> "$GITHUB_OUTPUT"
                """, id="c"),
            run("echo not run", id="d"),
            run("echo runs", id="e", **{"if": "always()"}),
            run("echo runs", id="f", **{"if": "failure()"}),
            run("echo not run", id="g", **{"if": "steps.c.outcome == 'failure'"}),
            run("echo runs", id="h", **{"if": "failure() && steps.c.outcome == 'failure'"}),
            run("false | true", id="i", **{"if": "always()"}),                  # pipefail
            run("x=$(false); echo set -e sees it", id="j", **{"if": "always()"}),
        ]
        job = self.job()
        result = job.run_composite(self.composite(steps, {"x": {"value": "${{ steps.a.outputs.x }}"}}),
                                   {}, "action", "action")
        got = {k: v.outcome for k, v in job.action_runs[0]["steps"].items()}
        self.assertEqual(got, {"a": "success", "b": "success", "c": "failure", "d": "skipped", "e": "success",
                               "f": "success", "g": "skipped", "h": "success", "i": "failure", "j": "failure"},
                         job.text())
        self.assertEqual(job.action_runs[0]["steps"]["c"].outputs, {})
        self.assertEqual(result.outcome, "failure")
        self.assertEqual(result.outputs, {"x": "hi"})
        self.assertEqual(job.first_failure[1], 4)

    def test_pipefail(self):
        job = self.job()
        job.run_composite(self.composite([{"shell": "bash", "run": "false | true", "id": "p"}]), {}, "a", "a")
        self.assertEqual(job.action_runs[0]["steps"]["p"].outcome, "failure")

    def test_the_old_measure_step_loses_the_exit_code_and_the_new_one_keeps_it(self):
        old = 'set -uo pipefail\nsh -c "exit 1"\ncode=$?\necho "exit-code=$code" >> "$GITHUB_OUTPUT"\nexit 0\n'
        new = 'set -euo pipefail\ncode=0\nsh -c "exit 1" || code=$?\necho "exit-code=$code" >> "$GITHUB_OUTPUT"\n'
        job = self.job()
        job.run_composite(self.composite([{"shell": "bash", "run": old, "id": "old"},
                                          {"shell": "bash", "run": new, "id": "new", "if": "always()"}]),
                          {}, "a", "a")
        steps = job.action_runs[0]["steps"]
        self.assertEqual((steps["old"].outcome, steps["old"].outputs), ("failure", {}))
        self.assertEqual((steps["new"].outcome, steps["new"].outputs), ("success", {"exit-code": "1"}))

    def test_cache_scopes_and_keys(self):
        ws = Path(self.tmp.name) / "ws"
        (ws / "c").mkdir(parents=True)
        (ws / "c" / "f").write_text("feature-1")
        push = Job(self.h, "push", event_name="push", event={}, ref="refs/heads/feature-1", sha="1" * 40,
                   workspace=ws)
        push.cache_restore("cache", "c", {"path": "c", "key": "k-111", "restore-keys": "k-"})
        push.finish()
        self.assertEqual([(e["scope"], e["key"]) for e in self.h.cache.entries], [("refs/heads/feature-1", "k-111")])
        # A pull request based on feature-1 restores it; one based on main does not.
        stacked = self.job("stacked", base_ref="feature-1")
        out = stacked.cache_restore("cache", "c", {"path": "c", "key": "k-111", "restore-keys": "k-"}).outputs
        self.assertEqual(out["cache-hit"], "true")
        self.assertEqual((stacked.workspace / "c" / "f").read_text(), "feature-1")
        other = self.job("other", base_ref="main")
        out = other.cache_restore("cache", "c", {"path": "c", "key": "k-111", "restore-keys": "k-"}).outputs
        self.assertNotIn("cache-hit", out)
        # Restore keys: newest first, not an exact hit; a failed job saves nothing.
        (ws / "c" / "f").write_text("newer")
        push2 = Job(self.h, "push2", event_name="push", event={}, ref="refs/heads/feature-1", sha="2" * 40,
                    workspace=ws)
        push2.cache_restore("cache", "c", {"path": "c", "key": "k-222"})
        (ws / "c" / "f").write_text("newer")
        push2.finish()
        partial = self.job("partial", base_ref="feature-1")
        out = partial.cache_restore("cache", "c", {"path": "c", "key": "k-333", "restore-keys": "k-"}).outputs
        self.assertEqual((out["cache-hit"], out["cache-matched-key"]), ("false", "k-222"))
        partial.failed = True
        partial.finish()
        self.assertFalse(self.h.cache.has("refs/pull/1/merge", "k-333"))

    def test_upload_artifact_honours_excludes(self):
        ws = Path(self.tmp.name) / "ws"
        for f in ("coldgate-out/report.md", "coldgate-out/cache/x.json", "coldgate-out/ab/base/y", "coldgate-out/pr-number"):
            (ws / f).parent.mkdir(parents=True, exist_ok=True)
            (ws / f).write_text("x")
        self.h.artifacts.upload(7, "coldgate-out", ws, "coldgate-out/\n!coldgate-out/cache/\n!coldgate-out/ab/base/\n")
        got = sorted(p.relative_to(self.h.artifacts.folder(7, "coldgate-out")).as_posix()
                     for p in self.h.artifacts.folder(7, "coldgate-out").rglob("*") if p.is_file())
        self.assertEqual(got, ["pr-number", "report.md"])

    def test_checkout_like_actions_checkout(self):
        o = self.h.origin
        o.commit("main", {"a": "1"}, "one")
        o.commit("feature", {"a": "2"}, "two", parent="main")
        pr = o.open_pull_request(1, "feature", "main")
        shallow = Job(self.h, "shallow", event_name="pull_request", event={}, ref="refs/pull/1/merge",
                      sha=pr["merge_sha"], base_ref="main")
        shallow.checkout("checkout", "c", {})
        ws = shallow.workspace
        self.assertEqual(git(ws, "rev-parse", "HEAD"), pr["merge_sha"])
        self.assertEqual(git(ws, "rev-parse", "--is-shallow-repository"), "true")
        self.assertEqual(git(ws, "cat-file", "-t", pr["head_sha"], check=False), "")  # not fetched
        self.assertEqual(git(ws, "branch", "-r"), "pull/1/merge")
        full = Job(self.h, "full", event_name="pull_request", event={}, ref="refs/pull/1/merge",
                   sha=pr["merge_sha"], base_ref="main")
        full.checkout("checkout", "c", {"fetch-depth": "0"})
        self.assertEqual(git(full.workspace, "rev-parse", "--is-shallow-repository"), "false")
        self.assertEqual(git(full.workspace, "rev-parse", "origin/feature"), pr["head_sha"])

    def test_checkout_of_a_push_whose_branch_moved_on(self):
        # actions/checkout checks out the event's commit, not the branch's newer tip.
        o = self.h.origin
        first = o.commit("main", {"a": "1"}, "one")
        o.commit("main", {"a": "2"}, "two")
        for depth in ("0", "1"):
            job = Job(self.h, f"push {depth}", event_name="push", event={}, ref="refs/heads/main", sha=first)
            job.checkout("checkout", "c", {"fetch-depth": depth})
            self.assertEqual(git(job.workspace, "rev-parse", "HEAD"), first, depth)
            self.assertEqual(git(job.workspace, "rev-parse", "--abbrev-ref", "HEAD"), "main", depth)

    def test_a_push_from_a_checkout_needs_contents_write(self):
        o = self.h.origin
        sha = o.commit("main", {"a": "1"}, "one")

        def push(permissions, **with_):
            job = Job(self.h, "push", event_name="push", event={}, ref="refs/heads/main", sha=sha)
            job.grant(permissions)
            job.checkout("checkout", "c", with_)
            env = {"PATH": "/usr/bin:/bin", "HOME": str(job.home), "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
                   "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
            git(job.workspace, "commit", "-q", "--allow-empty", "-m", "x", env=env)
            out = subprocess.run(["git", "push", "origin", "HEAD:refs/heads/other"], cwd=job.workspace, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return out.returncode, out.stdout

        code, out = push({"contents": "read"})
        self.assertNotEqual(code, 0)
        self.assertIn("Permission to acme/shop.git denied to github-actions[bot].", out)
        code, out = push(None)          # no permissions: key: the default token reads only
        self.assertNotEqual(code, 0)
        code, out = push({"contents": "write"}, **{"persist-credentials": "false"})
        self.assertNotEqual(code, 0)
        self.assertIn("persist-credentials: false", out)
        self.assertEqual(o.bare_git("rev-parse", "-q", "--verify", "refs/heads/other", check=False), "")
        code, out = push({"contents": "write"})
        self.assertEqual(code, 0, out)
        self.assertNotEqual(o.bare_git("rev-parse", "refs/heads/other"), sha)


class Workflows(unittest.TestCase):
    """Jobs of one workflow run: needs, outputs, job-level if:, environment:, and the Pages stubs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.api = FakeGitHub()
        self.src = Path(self.tmp.name) / "src"
        (self.src / "ci" / "github").mkdir(parents=True)
        self.h = Harness(Path(self.tmp.name) / "run", self.src, "/bin/true", self.api)
        self.sha = self.h.origin.commit("main", {"a": "1"}, "one")

    def tearDown(self):
        self.api.close()
        self.tmp.cleanup()

    def workflow(self, jobs):
        (self.src / "ci" / "github" / "t.yml").write_text(
            yaml.safe_dump({"name": "t", "on": {"push": {}}, "permissions": {"contents": "read"}, "jobs": jobs}))

    def job(self, job_id, run_id=None, needs=None):
        job = Job(self.h, job_id, event_name="push", event={}, ref="refs/heads/main", sha=self.sha,
                  job_id=job_id, run_id=run_id)
        return run_workflow_job(self.h, "t.yml", job_id, job, needs=needs)

    def test_a_run_of_two_jobs_publishes_a_page(self):
        deploy = {"needs": "build", "permissions": {"pages": "write", "id-token": "write"},
                  "environment": {"name": "github-pages", "url": "${{ steps.d.outputs.page_url }}"},
                  "steps": [{"id": "d", "uses": "actions/deploy-pages@v4"}]}
        self.workflow({
            "build": {"runs-on": "x", "outputs": {"page": "${{ steps.p.outputs.written }}"}, "steps": [
                {"id": "p", "run": "mkdir -p site/css && echo hi > site/index.html && echo b > site/css/a.css\n"
                                   "ln -s index.html site/link.html\necho written=true >> \"$GITHUB_OUTPUT\"\n"},
                {"run": "exit 1"},
                {"uses": "actions/upload-pages-artifact@v3", "if": "always()", "with": {"path": "site"}}]},
            "deploy": dict(deploy, **{"if": "${{ !cancelled() && needs.build.outputs.page == 'true' }}"}),
            "after-success": dict(deploy),  # no if: success(), so skipped after a failed build
            "no-token": dict(deploy, permissions={"pages": "write"}, **{"if": "always()"}),
        })
        build = self.job("build")
        self.assertEqual((build.result, build.outputs), ("failure", {"page": "true"}), build.text())
        with self.assertRaises(HarnessError):  # a needed job must be given
            self.job("deploy", run_id=build.run_id)
        with self.assertRaises(HarnessError):  # of the same run
            self.job("deploy", needs={"build": build})
        deploy = self.job("deploy", run_id=build.run_id, needs={"build": build})
        self.assertEqual(deploy.result, "success", deploy.text())
        url = "https://acme.github.io/shop/"
        self.assertEqual(deploy.environment, {"name": "github-pages", "url": url})
        site = self.h.pages[-1]["site"]
        self.assertEqual(self.h.pages[-1]["url"], url)
        self.assertEqual(sorted(p.relative_to(site).as_posix() for p in site.rglob("*")),
                         ["css", "css/a.css", "index.html", "link.html"])
        self.assertFalse((site / "link.html").is_symlink())  # tar --dereference
        skipped = self.job("after-success", run_id=build.run_id, needs={"build": build})
        self.assertEqual(skipped.result, "skipped")
        no_token = self.job("no-token", run_id=build.run_id, needs={"build": build})
        self.assertEqual(no_token.result, "failure")
        self.assertIn(("error", 'Ensure GITHUB_TOKEN has permission "id-token: write".'), no_token.annotations)
        # Another run has no page to deploy.
        other = Job(self.h, "build 2", event_name="push", event={}, ref="refs/heads/main", sha=self.sha,
                    job_id="build")
        other.failed = True
        lone = self.job("deploy", run_id=other.run_id, needs={"build": other})
        self.assertEqual(lone.result, "skipped")  # its output page is not 'true'

    def test_deploy_pages_wants_this_runs_artifact(self):
        self.workflow({"deploy": {"runs-on": "x", "permissions": {"pages": "write", "id-token": "write"},
                                  "steps": [{"uses": "actions/deploy-pages@v4"}]}})
        job = self.job("deploy")
        self.assertEqual(job.result, "failure")
        self.assertTrue(any("No artifacts found for this workflow run" in m for _, m in job.annotations), job.annotations)

    def test_a_job_key_not_replayed_is_refused(self):
        self.workflow({"build": {"runs-on": "x", "services": {"db": {"image": "postgres"}}, "steps": []}})
        with self.assertRaises(HarnessError):
            self.job("build")


if __name__ == "__main__":
    unittest.main()
