package schedule

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openStore opens a store under dir, closed when the test ends unless
// the test closed it first.
func openStore(t *testing.T, dir string) *store.DB {
	t.Helper()
	db, err := store.Open(dir, &store.Options{CacheSize: 1 << 20, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
