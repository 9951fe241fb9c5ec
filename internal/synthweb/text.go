package synthweb

import (
	"strings"
	"sync"
)

// wordList is the vocabulary of page text. Only [a-z] so that text never
// needs HTML escaping and anchor text can be copied as is.
const wordList = `the of and to in is it you that he was for on are with as his they be at one
have this from or had by hot word but what some we can out other were all there when up use your
how said an each she which do their time if will way about many then them write would like so these
her long make thing see him two has look more day could go come did number sound no most people my
over know water than call first who may down side been now find any new work part take get place
made live where after back little only round man year came show every good me give our under name
very through just form sentence great think say help low line differ turn cause much mean before
move right boy old too same tell does set three want air well also play small end put home read
hand port large spell add even land here must big high such follow act why ask men change went
light kind off need house picture try us again animal point mother world near build self earth
father head stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard start might
story saw far sea draw left late run while press close night real life few north open seem
together next white children begin got walk example ease paper group always music those both mark
often letter until mile river car feet care second book carry took science eat room friend began
idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl
usual young ready above ever red list though feel talk bird soon body dog family direct pose leave
song measure door product black short numeral class wind question happen complete ship area half
rock order fire south problem piece told knew pass since top whole king space heard best hour
better true during hundred five remember step early hold west ground interest reach fast verb sing
listen six table travel less morning ten simple several vowel toward war lay against pattern slow
center love person money serve appear road map rain rule govern pull cold notice voice unit power
town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
correct able pound done beauty drive stood contain front teach week final gave green quick develop
ocean warm free minute strong special mind behind clear tail produce fact street inch multiply
nothing course stay wheel full force blue object decide surface deep moon island foot system busy
test record boat common gold possible plane dry wonder laugh thousand ago ran check game shape miss
brought heat snow tire bring yes distant fill east paint language among`

const (
	// textBlockSize is the size of the precomputed prose that page text is
	// copied from. Copying slices of it keeps a 40 KB page render in the
	// microseconds, where drawing word by word would cost tens of them. It
	// is large so that two pages rarely copy the same passage: with 64 KiB,
	// unrelated 40 KB pages shared most of their word triples and came
	// within 9 to 12 SimHash bits of each other (149 of 485,000 pairs); at
	// 4 MiB their distances are those of random fingerprints.
	textBlockSize = 4 << 20
	// textChunk is the longest single copy from the block; longer text is
	// assembled from several chunks at different offsets.
	textChunk = 4 << 10
	// maxWordLen bounds every word in wordList (checked when the table is
	// built) so that size budgets can be computed up front.
	maxWordLen = 12
)

// textTable is the read-only source of page text, one per seed.
type textTable struct {
	words []string
	block []byte
	limit int // chunks start below it, leaving room for a full chunk
}

// textTables caches the table of each seed: building 4 MiB of prose takes
// tens of milliseconds, and tests start many webs with few seeds.
var textTables sync.Map // int64 -> func() *textTable

func newTextTable(seed int64) *textTable {
	f, _ := textTables.LoadOrStore(seed, sync.OnceValue(func() *textTable { return buildTextTable(seed) }))
	return f.(func() *textTable)()
}

func buildTextTable(seed int64) *textTable {
	t := &textTable{words: strings.Fields(wordList)}
	r := newRNG(seed, streamTextTable, 0, 0)
	b := make([]byte, 0, textBlockSize+64)
	sentence := 0
	for len(b) < textBlockSize {
		w := t.words[r.intn(len(t.words))]
		start := len(b)
		b = append(b, w...)
		if sentence == 0 {
			b[start] -= 'a' - 'A' // capitalise the first word of a sentence
			sentence = r.between(6, 18)
		}
		sentence--
		if sentence == 0 {
			b = append(b, '.')
		}
		b = append(b, ' ')
	}
	t.block = b
	t.limit = len(b) - textChunk - 2*maxWordLen
	return t
}

// start returns a random word start in the block below limit.
func (t *textTable) start(r *rng) int {
	s := r.intn(t.limit - maxWordLen - 1)
	for s > 0 && t.block[s-1] != ' ' {
		s++
	}
	return s
}

// appendText appends about n bytes of prose starting and ending on word
// boundaries; it may write up to maxWordLen+1 bytes more than n.
func (t *textTable) appendText(dst []byte, r *rng, n int) []byte {
	for n > 0 {
		c := min(n, textChunk)
		s := t.start(r)
		e := s + c
		for e < len(t.block) && t.block[e-1] != ' ' {
			e++
		}
		dst = append(dst, t.block[s:e]...)
		n -= e - s
	}
	return dst
}

// appendExact appends exactly n bytes of prose (the last word may be cut).
func (t *textTable) appendExact(dst []byte, r *rng, n int) []byte {
	for n > 0 {
		c := min(n, textChunk)
		s := t.start(r)
		dst = append(dst, t.block[s:s+c]...)
		n -= c
	}
	return dst
}

// appendWords appends k words separated by single spaces.
func (t *textTable) appendWords(dst []byte, r *rng, k int) []byte {
	for i := 0; i < k; i++ {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, t.words[r.intn(len(t.words))]...)
	}
	return dst
}
