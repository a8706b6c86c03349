package llm

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"sync"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decoder for fitForClaude
)

// What a provider's image part takes, where it takes less than Parley lets
// a user attach (app/attach: PNG, JPEG, WebP and GIF up to 10 MiB).
const (
	// claudeMaxImage is the longest base64 text of one image Anthropic
	// takes ("image exceeds 5 MB maximum" counts the base64, not the
	// file): about 3.75 MiB of image.
	claudeMaxImage = 5 << 20
	// claudeEdge is the long edge Anthropic scales a larger image down to
	// before the model sees it (its vision guide: 1568 pixels), so an
	// image shrunk to it loses nothing the model would have seen.
	claudeEdge = 1568
	// claudeJPEGQuality keeps a shrunk photo's detail; a 1568-pixel JPEG
	// at 85 is well under a megabyte.
	claudeJPEGQuality = 85
)

// gifAsPNG is f's first frame as a PNG (Gemini's image types are PNG, JPEG,
// WebP, HEIC and HEIF); f as it is when it does not decode, for Gemini to
// refuse.
func gifAsPNG(f File) File {
	img, err := gif.Decode(bytes.NewReader(f.Data))
	if err != nil {
		return f
	}
	var b bytes.Buffer
	if png.Encode(&b, img) != nil {
		return f
	}
	return File{Name: f.Name, MediaType: "image/png", Data: b.Bytes()}
}

// claudeFits keeps the shrunk images by the SHA-256 of their original (an
// empty File: it could not be shrunk): every request of a chat sends its
// images again, and an agent's steps are many requests, each of which
// would decode a large photo anew.
var claudeFits = struct {
	sync.Mutex
	m map[[sha256.Size]byte]File
}{m: map[[sha256.Size]byte]File{}}

// claudeFitsKept bounds the cache: a few chats' worth of photos, under a
// megabyte each.
const claudeFitsKept = 32

// fitForClaude is f as Anthropic takes it: as it is when its base64 fits
// claudeMaxImage, else shrunk to claudeEdge pixels on its long edge (only
// ever down) and sent as a JPEG, transparency on white. f as it is when it
// does not decode or still does not fit, for Anthropic to refuse.
func fitForClaude(f File) File {
	if base64.StdEncoding.EncodedLen(len(f.Data)) <= claudeMaxImage {
		return f
	}
	key := sha256.Sum256(f.Data)
	claudeFits.Lock()
	fit, ok := claudeFits.m[key]
	claudeFits.Unlock()
	if !ok {
		fit, _ = shrinkForClaude(f.Data)
		claudeFits.Lock()
		if len(claudeFits.m) >= claudeFitsKept {
			clear(claudeFits.m) // rare: the images of the chats in use come back
		}
		claudeFits.m[key] = fit
		claudeFits.Unlock()
	}
	if fit.Data == nil {
		return f
	}
	return File{Name: f.Name, MediaType: fit.MediaType, Data: fit.Data}
}

// shrinkForClaude does fitForClaude's work: data as a JPEG that fits.
func shrinkForClaude(data []byte) (File, error) {
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return File{}, err
	}
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	if long := max(w, h); long > claudeEdge {
		w, h = max(1, w*claudeEdge/long), max(1, h*claudeEdge/long)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Over, nil)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, dst, &jpeg.Options{Quality: claudeJPEGQuality}); err != nil {
		return File{}, err
	}
	if base64.StdEncoding.EncodedLen(b.Len()) > claudeMaxImage {
		return File{}, fmt.Errorf("%d×%d pixels as a JPEG are still over Anthropic's limit", w, h)
	}
	return File{MediaType: "image/jpeg", Data: b.Bytes()}, nil
}
