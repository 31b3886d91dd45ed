#!/usr/bin/env python3
"""Rebuild /work/data/blind/travel-leave/source/ from a clone of 18F/handbook.

Usage: prepare.py HANDBOOK_GIT_DIR OUT_DIR
Needs git, pandoc (2.17 used) and chromium (for the PDF). See SOURCES.md.

The Jekyll pages are turned into ordinary documents of a new user's kind:
front matter -> a '# title' line, {% page "/x/" %} -> https://handbook.tts.gsa.gov/x/,
{% alert %}...{% endalert %} -> a blockquote, {% image %} and other tags dropped.
leave.md is kept byte for byte (a Markdown page as the site keeps it).
"""
import os
import re
import subprocess
import sys
import tempfile

COMMIT = "1e4955634d0369f17e5bbc0ebbf8f62e2a3dfe4b"
BASE = "pages/travel-and-leave/"
POL = BASE + "travel-and-leave-policies/"
SITE = "https://handbook.tts.gsa.gov"

HANDBOOK = [  # the DOCX travel handbook, in this order
    POL + "first-time-travel-travel-card.md",
    POL + "travel-guide-2-book-travel.md",
    POL + "travel-guide-3-travel.md",
    POL + "travel-guide-4-reimbursement.md",
    POL + "travel-guide-a-amended-authorizations.md",
    POL + "travel-guide-b-after-hours-emergency-travel-authorizations.md",
    POL + "working-while-traveling.md",
]


def show(repo, path):
    return subprocess.run(["git", "--git-dir", repo, "show", f"{COMMIT}:{path}"],
                          check=True, capture_output=True).stdout


def plain(md):
    """Jekyll page -> plain Markdown."""
    title = ""
    if md.startswith("---\n"):
        end = md.index("\n---\n", 4)
        front, md = md[4:end], md[end + 5:]
        m = re.search(r"^title:\s*(.+)$", front, re.M)
        if m:
            title = m.group(1).strip().strip('"')
    md = re.sub(r'\{%\s*page\s+"([^"]*)"\s*%\}', lambda m: SITE + "/" + m.group(1).strip("/") + "/", md)
    md = re.sub(r'\{%\s*alert(?:\s+"([^"]*)")?\s*%\}(.*?)\{%\s*endalert\s*%\}',
                lambda m: "\n".join("> " + l.strip() for l in
                                    (([f"**{m.group(1)}**", ""] if m.group(1) else []) + m.group(2).strip().splitlines())),
                md, flags=re.S)
    md = re.sub(r"\{%.*?%\}", "", md, flags=re.S)
    return (f"# {title}\n\n" if title else "") + md.strip() + "\n"


def pandoc(src, dst, *args):
    subprocess.run(["pandoc", "-f", "markdown", src, "-o", dst, *args], check=True)


def main():
    repo, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        def md(name, text):
            p = os.path.join(tmp, name)
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            return p
        # 1. DOCX handbook: the travel guide chapters, each a level-1 heading.
        book = "\n\n".join(plain(show(repo, p).decode("utf-8")) for p in HANDBOOK)
        pandoc(md("handbook.md", book), os.path.join(out, "TTS-Travel-Handbook.docx"),
               "--metadata", "title=TTS Travel Handbook")
        # 2. Markdown page, as the site keeps it.
        with open(os.path.join(out, "leave.md"), "wb") as f:
            f.write(show(repo, BASE + "leave.md"))
        # 3. HTML FAQ.
        pandoc(md("faq.md", plain(show(repo, POL + "travel-guide-faq.md").decode("utf-8"))),
               os.path.join(out, "travel-faq.html"), "--standalone",
               "--metadata", "title=Travel guide: Frequently Asked Questions")
        # 4. PDF: overtime, comp time and credit hours (pandoc HTML, printed by headless Chromium).
        html = os.path.join(tmp, "overtime.html")
        pandoc(md("overtime.md", plain(show(repo, BASE + "overtime.md").decode("utf-8"))), html,
               "--standalone", "--metadata", "title=Overtime, compensatory time and credit hours")
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--no-pdf-header-footer", "--print-to-pdf=" + os.path.join(out, "overtime-and-comp-time.pdf"),
                        "file://" + html], check=True, capture_output=True)
        # 5. Plain text: paid parental leave.
        pandoc(md("ppl.md", plain(show(repo, BASE + "paid-parental-leave.md").decode("utf-8"))),
               os.path.join(out, "paid-parental-leave.txt"), "-t", "plain", "--wrap=auto", "--columns=78")


if __name__ == "__main__":
    main()
