"""The book's link check, run by .ci/run: every relative Markdown link
('](target)') in README.md and docs/src/**/*.md must name an existing file, an
anchor (#frag) a heading of its page (mdBook/GitHub slug), and SUMMARY.md must
list every page. Links with a scheme (http:, mailto:) are skipped.

Run: python3 docs/check_links.py"""
import glob, os, re, sys
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
files = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs/src/**/*.md'), recursive=True))
link_re = re.compile(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
def slug(h):
    h = re.sub(r'[`*_]', '', h.strip()).lower()
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')
def anchors(path):
    out, in_code = set(), False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'): in_code = not in_code
        if not in_code and (m := re.match(r'^#{1,6} (.*)', line)):
            out.add(slug(m.group(1)))
    return out
bad, n = [], 0
for f in files:
    in_code = False
    for i, line in enumerate(open(f, encoding='utf-8'), 1):
        if line.lstrip().startswith('```'): in_code = not in_code; continue
        if in_code: continue
        for target in link_re.findall(line):
            if re.match(r'^[a-z]+:', target): continue
            n += 1
            path, _, frag = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(dest):
                bad.append(f'{os.path.relpath(f, root)}:{i}: {target} -> missing {os.path.relpath(dest, root)}')
            elif frag and dest.endswith('.md') and frag not in anchors(dest):
                bad.append(f'{os.path.relpath(f, root)}:{i}: {target} -> no heading #{frag}')
# SUMMARY lists every page
summary = open(os.path.join(root, 'docs/src/SUMMARY.md')).read()
listed = set(re.findall(r'\]\(([^)]+\.md)\)', summary))
for p in glob.glob(os.path.join(root, 'docs/src/**/*.md'), recursive=True):
    rel = os.path.relpath(p, os.path.join(root, 'docs/src'))
    if rel != 'SUMMARY.md' and rel not in listed:
        bad.append(f'docs/src/SUMMARY.md: does not list {rel}')
print(f'{len(files)} files, {n} relative links checked, {len(bad)} problems')
for b in bad: print('  ' + b)
sys.exit(1 if bad else 0)
