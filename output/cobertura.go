package output

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/profile"
)

// CoberturaOptions control WriteCobertura.
type CoberturaOptions struct {
	// Root is the source root, written as the one <source>; file names
	// under it are written relative to it. "" means "/".
	Root string
	// Timestamp is the report's timestamp attribute, in seconds since
	// 1970 as gcovr writes it; the caller supplies it so the output is a
	// function of its inputs.
	Timestamp int64
}

// The elements of Cobertura's coverage-04.dtd that WriteCobertura writes.
type (
	cobCoverage struct {
		XMLName         xml.Name     `xml:"coverage"`
		LineRate        string       `xml:"line-rate,attr"`
		BranchRate      string       `xml:"branch-rate,attr"`
		LinesCovered    int          `xml:"lines-covered,attr"`
		LinesValid      int          `xml:"lines-valid,attr"`
		BranchesCovered int          `xml:"branches-covered,attr"`
		BranchesValid   int          `xml:"branches-valid,attr"`
		Complexity      string       `xml:"complexity,attr"`
		Version         string       `xml:"version,attr"`
		Timestamp       int64        `xml:"timestamp,attr"`
		Sources         []string     `xml:"sources>source"`
		Packages        []cobPackage `xml:"packages>package"`
	}
	cobPackage struct {
		Name       string     `xml:"name,attr"`
		LineRate   string     `xml:"line-rate,attr"`
		BranchRate string     `xml:"branch-rate,attr"`
		Complexity string     `xml:"complexity,attr"`
		Classes    []cobClass `xml:"classes>class"`
	}
	cobClass struct {
		Name       string      `xml:"name,attr"`
		Filename   string      `xml:"filename,attr"`
		LineRate   string      `xml:"line-rate,attr"`
		BranchRate string      `xml:"branch-rate,attr"`
		Complexity string      `xml:"complexity,attr"`
		Methods    cobMethods  `xml:"methods"`
		Lines      cobLineList `xml:"lines"`
	}
	cobMethods struct {
		Method []cobMethod `xml:"method"`
	}
	cobMethod struct {
		Name       string      `xml:"name,attr"`
		Signature  string      `xml:"signature,attr"`
		LineRate   string      `xml:"line-rate,attr"`
		BranchRate string      `xml:"branch-rate,attr"`
		Complexity string      `xml:"complexity,attr"`
		Lines      cobLineList `xml:"lines"`
	}
	cobLineList struct {
		Line []cobLine `xml:"line"`
	}
	cobLine struct {
		Number int    `xml:"number,attr"`
		Hits   uint64 `xml:"hits,attr"`
		Branch string `xml:"branch,attr"`
		// ConditionCoverage is "50% (1/2)": outcomes taken of the line's
		// branch outcomes, as gcovr writes it; only on branch="true" lines.
		ConditionCoverage string `xml:"condition-coverage,attr,omitempty"`
	}
)

// coberturaDoctype is the document type declaration Cobertura and gcovr
// write.
const coberturaDoctype = `<!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">`

// WriteCobertura writes p to w as a Cobertura XML report (coverage-04.dtd),
// the coverage format most CI systems read (GitLab, Jenkins, Azure
// DevOps), laid out as gcovr --xml lays out C sources:
//
//   - one <source>, opt.Root; a file under it is named relative to it,
//     any other by its absolute path;
//   - one <package> per directory of those names, named after the
//     directory with '/' replaced by '.' ("" for the root itself), in
//     name order;
//   - one <class> per source file, named after its base name, in file
//     name order;
//   - in each class, one <method> per function whose entry is in the file
//     (named by DisplayName, with an empty signature), holding the file's
//     counted lines from its entry line up to the next function's entry,
//     then the class's <lines>: every counted line with its hits.
//
// line-rate is covered lines over counted lines (0 when there are none),
// at every level; lines-covered and lines-valid give the totals. With
// branch outcomes (--blocks), each conditional jump has two outcomes (taken,
// not taken): a line holding jumps has branch="true" and
// condition-coverage "P% (covered/valid)" as gcovr writes it, and
// branch-rate, branches-covered and branches-valid count outcomes that
// happened; without them they are 0 and every line has branch="false".
// complexity is 0.
// version is "patchprof". Files come from p.Lines and p.Functions as in
// WriteLCOV, entries of one file from several modules summed (see
// exportFiles). The output depends only on p and opt.
func WriteCobertura(w io.Writer, p *profile.Profile, opt CoberturaOptions) error {
	if p == nil {
		return ErrNilProfile
	}
	root := cleanDir(opt.Root)
	if root == "" {
		root = "/"
	}
	doc := cobCoverage{
		Complexity: "0",
		Version:    "patchprof",
		Timestamp:  opt.Timestamp,
		Sources:    []string{root},
	}
	pkgs := make(map[string]*cobPackage)
	pkgTally := make(map[string]*cobTally)
	var total cobTally
	for _, f := range exportFiles(p) {
		name := cobFileName(f.name, root)
		pkgName := cobPackageName(name)
		pkg := pkgs[pkgName]
		if pkg == nil {
			pkg = &cobPackage{Name: pkgName, Complexity: "0"}
			pkgs[pkgName] = pkg
			pkgTally[pkgName] = &cobTally{}
		}
		c, ft := cobClassOf(f, name)
		pkg.Classes = append(pkg.Classes, c)
		pkgTally[pkgName].add(ft)
		total.add(ft)
	}
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pkg := pkgs[n]
		sort.SliceStable(pkg.Classes, func(i, j int) bool { return pkg.Classes[i].Filename < pkg.Classes[j].Filename })
		pkg.LineRate, pkg.BranchRate = pkgTally[n].rates()
		doc.Packages = append(doc.Packages, *pkg)
	}
	doc.LineRate, doc.BranchRate = total.rates()
	doc.LinesCovered, doc.LinesValid = total.hit, total.all
	doc.BranchesCovered, doc.BranchesValid = total.bhit, total.ball

	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header)
	bw.WriteString(coberturaDoctype + "\n")
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("cobertura export: %w", err)
	}
	bw.WriteString("\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cobertura export: %w", err)
	}
	return nil
}

// A cobTally counts lines (covered, all) and branch outcomes (happened,
// all), for one method, class, package or the whole report.
type cobTally struct{ hit, all, bhit, ball int }

// add adds u to t.
func (t *cobTally) add(u cobTally) {
	t.hit, t.all, t.bhit, t.ball = t.hit+u.hit, t.all+u.all, t.bhit+u.bhit, t.ball+u.ball
}

// rates returns t's line-rate and branch-rate.
func (t *cobTally) rates() (line, branch string) {
	return rate(t.hit, t.all), rate(t.bhit, t.ball)
}

// cobFileName returns the name a file recorded as name has in the report:
// relative to root when it lies under it, else its absolute path (without
// the leading "/" when root is "/").
func cobFileName(name, root string) string {
	if root == "/" {
		return strings.TrimPrefix(name, "/")
	}
	if rest, ok := strings.CutPrefix(name, root+"/"); ok && rest != "" {
		return rest
	}
	return name
}

// cobPackageName returns the package of a file named name in the report:
// its directory with '/' replaced by '.', "" for the root itself.
func cobPackageName(name string) string {
	dir := path.Dir(name)
	if dir == "." {
		return ""
	}
	return strings.ReplaceAll(strings.Trim(dir, "/"), "/", ".")
}

// cobClassOf returns the <class> of f, named name in the report, with its
// methods and lines, and the tally of its lines.
func cobClassOf(f *exportFile, name string) (cobClass, cobTally) {
	outcomes := cobOutcomes(f.branches)
	c := cobClass{Name: path.Base(name), Filename: name, Complexity: "0"}
	var ft cobTally
	for _, l := range f.lines {
		c.Lines.Line = append(c.Lines.Line, cobLineOf(l, outcomes, &ft))
	}
	c.LineRate, c.BranchRate = ft.rates()
	for i, fn := range f.funcs {
		m := cobMethod{Name: DisplayName(fn.Name), Complexity: "0"}
		var mt cobTally
		for _, l := range functionLines(f, i) {
			m.Lines.Line = append(m.Lines.Line, cobLineOf(l, outcomes, &mt))
		}
		m.LineRate, m.BranchRate = mt.rates()
		c.Methods.Method = append(c.Methods.Method, m)
	}
	return c, ft
}

// cobOutcomes returns, per line, the branch outcomes of bs that happened
// and all of them (two per conditional jump).
func cobOutcomes(bs []profile.Branch) map[int][2]int {
	outcomes := map[int][2]int{}
	for _, b := range bs {
		o := outcomes[b.Line]
		o[1] += 2
		if b.Taken > 0 {
			o[0]++
		}
		if b.NotTaken > 0 {
			o[0]++
		}
		outcomes[b.Line] = o
	}
	return outcomes
}

// cobLineOf returns the <line> of l, and adds it to t.
func cobLineOf(l profile.Line, outcomes map[int][2]int, t *cobTally) cobLine {
	cl := cobLine{Number: l.Line, Hits: l.Count, Branch: "false"}
	t.all++
	if l.Count > 0 {
		t.hit++
	}
	if o, ok := outcomes[l.Line]; ok {
		cl.Branch = "true"
		cl.ConditionCoverage = fmt.Sprintf("%d%% (%d/%d)", o[0]*100/o[1], o[0], o[1])
		t.bhit += o[0]
		t.ball += o[1]
	}
	return cl
}

// functionLines returns the counted lines of f that belong to its i-th
// function by position: from its entry line up to, not including, the
// next entry line below it. A function without an entry line has none.
func functionLines(f *exportFile, i int) []profile.Line {
	start := f.funcs[i].Line
	if start < 1 {
		return nil
	}
	next := -1
	for _, g := range f.funcs {
		if g.Line > start {
			next = g.Line
			break
		}
	}
	var out []profile.Line
	for _, l := range f.lines {
		if l.Line >= start && (next < 0 || l.Line < next) {
			out = append(out, l)
		}
	}
	return out
}

// rate formats hit/all in the shortest form that reads back exactly (as
// Python's repr, which gcovr uses), 0 when all is 0.
func rate(hit, all int) string {
	if all == 0 {
		return "0"
	}
	return strconv.FormatFloat(float64(hit)/float64(all), 'g', -1, 64)
}
