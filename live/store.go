package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/mqttlab/mqttlab/engine"
)

// Store errors.
var (
	// ErrCorrupt reports a record file whose header, length or checksum does
	// not match its contents, or whose name does not match its key.
	ErrCorrupt = errors.New("live: corrupt record")
	// ErrBadKey reports a key that cannot be stored (too long for a file name).
	ErrBadKey = errors.New("live: bad record key")
	// ErrBadPersist reports a Persist action with an unknown operation.
	ErrBadPersist = errors.New("live: bad persist action")
)

// Record file layout: magic, key length, value length, CRC-32C of key and
// value, then the key and the value.
const (
	recordMagic  = "MQLR"
	headerLen    = 4 + 4 + 4 + 4
	recordPrefix = "r-"
	tempPrefix   = "tmp-"
	maxNameLen   = 240 // below NAME_MAX (255) with room for the temp prefix
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Store is a file-backed record store: one file per key in one directory.
// A Put writes a temp file and renames it over the record, so a crash leaves
// either the old or the new record, never a mix; with Sync the file and the
// directory are fsynced before Apply returns. It is safe for concurrent use.
type Store struct {
	dir string
	mu  sync.Mutex
}

// OpenStore opens (creating it if needed) the store in dir. Temp files left
// by a crash in the middle of a Put are removed: their Put never took effect.
func OpenStore(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("live: open store: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("live: open store: %w", err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, fmt.Errorf("live: open store: remove stale temp file: %w", err)
			}
		}
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Apply carries out one Persist action of an engine.
func (s *Store) Apply(p engine.Persist) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch p.Op {
	case engine.Put:
		return s.put(p.Key, p.Value, p.Sync)
	case engine.Delete:
		return s.delete(p.Key, p.Sync)
	default:
		return fmt.Errorf("%w: op %d for key %q", ErrBadPersist, p.Op, p.Key)
	}
}

func (s *Store) put(key string, value []byte, sync bool) error {
	name, err := fileName(key)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("live: put %q: %w", key, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	_, err = tmp.Write(encodeRecord(key, value))
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(s.dir, name))
	}
	if err == nil && sync {
		err = syncDir(s.dir)
	}
	if err != nil {
		return fmt.Errorf("live: put %q: %w", key, err)
	}
	return nil
}

func (s *Store) delete(key string, sync bool) error {
	name, err := fileName(key)
	if err != nil {
		return err
	}
	err = os.Remove(filepath.Join(s.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		err = nil // deleting an absent key is a no-op
	}
	if err == nil && sync {
		err = syncDir(s.dir)
	}
	if err != nil {
		return fmt.Errorf("live: delete %q: %w", key, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Records returns every stored record, sorted by key, for NewClient or
// NewBroker. A corrupt record is never dropped silently: the error names
// every corrupt or unexpected file (wrapping ErrCorrupt), and the slice
// holds the records that were read intact.
func (s *Store) Records() ([]engine.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("live: read store: %w", err)
	}
	var recs []engine.Record
	var errs []error
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			continue // an unfinished Put of this process: not a record yet
		}
		path := filepath.Join(s.dir, name)
		if e.IsDir() || !strings.HasPrefix(name, recordPrefix) {
			errs = append(errs, fmt.Errorf("%w: %s: not a record file", ErrCorrupt, path))
			continue
		}
		rec, err := readRecord(path, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		recs = append(recs, rec)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Key < recs[j].Key })
	return recs, errors.Join(errs...)
}

func readRecord(path, name string) (engine.Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return engine.Record{}, fmt.Errorf("live: read %s: %w", path, err)
	}
	rec, err := decodeRecord(data)
	if err != nil {
		return engine.Record{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if want, _ := fileName(rec.Key); want != name {
		return engine.Record{}, fmt.Errorf("%w: %s: holds key %q, whose file is %s", ErrCorrupt, path, rec.Key, want)
	}
	return rec, nil
}

// encodeRecord renders a record file.
func encodeRecord(key string, value []byte) []byte {
	b := make([]byte, 0, headerLen+len(key)+len(value))
	b = append(b, recordMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	crc := crc32.Update(crc32.Checksum([]byte(key), crcTable), crcTable, value)
	b = binary.BigEndian.AppendUint32(b, crc)
	b = append(b, key...)
	return append(b, value...)
}

// decodeRecord parses a record file, checking magic, lengths and checksum.
func decodeRecord(data []byte) (engine.Record, error) {
	if len(data) < headerLen {
		return engine.Record{}, fmt.Errorf("%d bytes, shorter than the %d-byte header", len(data), headerLen)
	}
	if string(data[:4]) != recordMagic {
		return engine.Record{}, fmt.Errorf("bad magic %q", data[:4])
	}
	klen := uint64(binary.BigEndian.Uint32(data[4:]))
	vlen := uint64(binary.BigEndian.Uint32(data[8:]))
	if body := uint64(len(data) - headerLen); klen+vlen != body {
		return engine.Record{}, fmt.Errorf("header says %d+%d bytes, file holds %d", klen, vlen, body)
	}
	key, value := data[headerLen:headerLen+klen], data[headerLen+klen:]
	crc := crc32.Update(crc32.Checksum(key, crcTable), crcTable, value)
	if want := binary.BigEndian.Uint32(data[12:]); crc != want {
		return engine.Record{}, fmt.Errorf("checksum %08x, header says %08x", crc, want)
	}
	return engine.Record{Key: string(key), Value: append([]byte(nil), value...)}, nil
}

// fileName encodes a key as a file name: lower-case letters, digits, '-'
// and '_' stand for themselves, every other byte (upper case included, so
// case-insensitive file systems stay safe) becomes %XX.
func fileName(key string) (string, error) {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString(recordPrefix)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	if b.Len() > maxNameLen {
		return "", fmt.Errorf("%w: %q encodes to a %d-byte file name (max %d)", ErrBadKey, key, b.Len(), maxNameLen)
	}
	return b.String(), nil
}
