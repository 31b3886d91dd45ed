package curate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// isURL reports whether s is an http(s) URL.
func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// download fetches rawURL with the bounds of opts and returns the body.
func download(ctx context.Context, opts *Options, rawURL string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.DownloadTimeout)
	defer cancel()
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	c := *client
	maxRedirects := opts.MaxRedirects
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("%w: more than %d redirects (curate.max_redirects)", ErrDownload, maxRedirects)
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDownload, err)
	}
	req.Header.Set("User-Agent", "vibe-curate/1")
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no complete answer within %s (curate.download_timeout)", ErrDownload, opts.DownloadTimeout)
		}
		return nil, fmt.Errorf("%w: %v", ErrDownload, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: HTTP %s", ErrDownload, resp.Status)
	}
	if resp.ContentLength > opts.MaxDownloadBytes {
		return nil, fmt.Errorf("%w: %d bytes is over curate.max_download_bytes (%d)", ErrTooLarge, resp.ContentLength, opts.MaxDownloadBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, opts.MaxDownloadBytes+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: no complete answer within %s (curate.download_timeout)", ErrDownload, opts.DownloadTimeout)
		}
		return nil, fmt.Errorf("%w: %v", ErrDownload, err)
	}
	if int64(len(data)) > opts.MaxDownloadBytes {
		return nil, fmt.Errorf("%w: more than curate.max_download_bytes (%d)", ErrTooLarge, opts.MaxDownloadBytes)
	}
	return data, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// urlBaseName is the name a download is stored under, before the sniffed
// extension is applied.
func urlBaseName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "download"
	}
	base := path.Base(u.Path)
	if base == "/" || base == "." || base == "" {
		base = u.Hostname()
	}
	base = strings.TrimSuffix(base, path.Ext(base))
	if base == "" {
		base = "download"
	}
	return base
}

// urlPathBase is the last segment of the URL's path ("" when none).
func urlPathBase(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}
