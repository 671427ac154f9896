#!/usr/bin/env python3
"""Run a systemd service's ExecStart= the way systemd would, where systemd is not PID 1.

    run_unit.py [--print] UNIT_FILE

Reads the [Service] section of UNIT_FILE: User=, Group=, Environment=,
EnvironmentFile= (a leading '-' makes it optional), WorkingDirectory= and the
first ExecStart= (prefixes '-', '@', ':', '+', '!' are understood; '@' is not
supported).  Expands the command line as systemd does ("${VAR}" is one word,
"$VAR" as a word of its own splits at whitespace, "$$" is "$"), then with
--print prints the words as JSON; without, runs the command with exactly the
unit's environment (plus PATH, LANG, USER, LOGNAME, HOME, SHELL as systemd sets
them) as User/Group, replacing this process.  Must run as root to switch users.
Used by test/bin/package-test.sh to start dynindex-gateway from the packaged unit.
"""
import json
import os
import pwd
import grp
import re
import sys


def parse_unit(path):
    """Return {section: [(key, value), ...]} of a unit file (continuation lines joined)."""
    sections = {}
    cur = None
    pending = ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if pending:
                line = pending + line
                pending = ""
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            s = line.strip()
            if not s or s[0] in "#;":
                continue
            if s.startswith("[") and s.endswith("]"):
                cur = s[1:-1]
                sections.setdefault(cur, [])
                continue
            if "=" in s and cur is not None:
                k, v = s.split("=", 1)
                sections[cur].append((k.strip(), v.strip()))
    return sections


def unquote_words(s):
    """Split a string into words with systemd's quoting: '...', "...", backslash escapes."""
    words = []
    i, n = 0, len(s)
    while i < n:
        while i < n and s[i].isspace():
            i += 1
        if i >= n:
            break
        w = []
        quoted = False
        while i < n and not s[i].isspace():
            c = s[i]
            if c in "'\"":
                q = c
                quoted = True
                i += 1
                while i < n and s[i] != q:
                    if s[i] == "\\" and q == '"' and i + 1 < n:
                        i += 1
                    w.append(s[i])
                    i += 1
                i += 1
            elif c == "\\" and i + 1 < n:
                w.append(s[i + 1])
                i += 2
            else:
                w.append(c)
                i += 1
        words.append(("".join(w), quoted))
    return words


def parse_env_file(path):
    """KEY=VALUE lines as systemd reads an EnvironmentFile (quotes stripped, comments skipped)."""
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if not s or s[0] in "#;" or "=" not in s:
                continue
            k, v = s.split("=", 1)
            k, v = k.strip(), v.strip()
            if len(v) >= 2 and v[0] == v[-1] == '"':
                v = re.sub(r'\\(.)', r'\1', v[1:-1])
            elif len(v) >= 2 and v[0] == v[-1] == "'":
                v = v[1:-1]
            env[k] = v
    return env


def expand(cmdline, env):
    """systemd's ExecStart= variable expansion: ${X} stays one word, a lone $X splits."""
    out = []
    for word, quoted in unquote_words(cmdline):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m and not quoted:
            out.extend(env.get(m.group(1), "").split())
            continue
        w = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda mm: env.get(mm.group(1), ""), word)
        out.append(w.replace("$$", "$"))
    return out


def main():
    args = sys.argv[1:]
    show = False
    if args and args[0] == "--print":
        show = True
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: run_unit.py [--print] UNIT_FILE")
    svc = {}
    items = parse_unit(args[0]).get("Service", [])
    env = {}
    execstart = None
    for k, v in items:
        if k == "Environment":
            for word, _ in unquote_words(v):
                if "=" in word:
                    a, b = word.split("=", 1)
                    env[a] = b
        elif k == "EnvironmentFile":
            optional = v.startswith("-")
            p = v[1:] if optional else v
            if os.path.exists(p):
                env.update(parse_env_file(p))
            elif not optional:
                sys.exit(f"run_unit.py: EnvironmentFile {p} does not exist")
        elif k == "ExecStart" and execstart is None and v:
            execstart = v
        else:
            svc[k] = v
    if execstart is None:
        sys.exit("run_unit.py: no ExecStart=")
    while execstart and execstart[0] in "-:+!":
        execstart = execstart[1:]
    if execstart.startswith("@"):
        sys.exit("run_unit.py: ExecStart=@ is not supported")
    argv = expand(execstart, env)
    if show:
        print(json.dumps({"user": svc.get("User"), "group": svc.get("Group"), "argv": argv}))
        return
    user = svc.get("User", "root")
    pw = pwd.getpwnam(user)
    gid = grp.getgrnam(svc["Group"]).gr_gid if "Group" in svc else pw.pw_gid
    full = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": os.environ.get("LANG", "C.UTF-8"), "USER": pw.pw_name, "LOGNAME": pw.pw_name,
            "HOME": pw.pw_dir, "SHELL": pw.pw_shell}
    full.update(env)
    os.chdir(svc.get("WorkingDirectory", "/"))
    os.setgroups([])
    os.initgroups(pw.pw_name, gid)
    os.setgid(gid)
    os.setuid(pw.pw_uid)
    os.execve(argv[0], argv, full)


if __name__ == "__main__":
    main()
