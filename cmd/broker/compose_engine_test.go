//go:build compose

package main

// The container engine `make compose` drives: Docker's compose plugin
// where it works, else podman-compose on podman (scripts/compose installs
// both on a Debian machine without Docker). podman-compose waits for a
// dependency's healthcheck only on podman 4.6 and later, and podman
// without systemd runs no healthcheck on its own; so on podman the test
// brings the services up one at a time in dependency order, and runs each
// healthcheck itself until it passes, where Docker's `up --wait` does both.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// composeEngine runs docker-compose.yml under the test's project name,
// with the profiles it was made for.
type composeEngine struct {
	engine   string   // the engine's own command: docker or podman
	compose  []string // its compose command
	profiles []string
	built    bool // the images with a build: section are built (podman)
}

// findComposeEngine returns Docker's compose if `docker compose version`
// answers, else podman-compose if it is on PATH; neither fails t and says
// how to get one.
func findComposeEngine(t *testing.T, profiles ...string) *composeEngine {
	t.Helper()
	if err := exec.Command("docker", "compose", "version").Run(); err == nil {
		return &composeEngine{engine: "docker", compose: []string{"docker", "compose"}, profiles: profiles}
	}
	if _, err := exec.LookPath("podman-compose"); err == nil {
		return &composeEngine{engine: "podman", compose: []string{"podman-compose"}, profiles: profiles}
	}
	t.Fatal("no compose: want Docker Engine with the compose plugin (https://docs.docker.com/engine/install/), " +
		"or podman and podman-compose (`make compose` installs them on Debian when docker compose is missing)")
	return nil
}

// exec runs the compose command with args and returns its output.
func (e *composeEngine) exec(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	full := append(slices.Clone(e.compose[1:]), "-p", composeProject, "-f", filepath.Join("..", "..", "docker-compose.yml"))
	for _, p := range e.profiles {
		full = append(full, "--profile", p)
	}
	out, err := exec.CommandContext(ctx, e.compose[0], append(full, args...)...).CombinedOutput()
	return string(out), err
}

// run is exec that fails t with the output.
func (e *composeEngine) run(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	out, err := e.exec(timeout, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(e.compose, " "), strings.Join(args, " "), err, out)
	}
	return out
}

// up builds the images and starts every service of the file's active
// profiles, and returns when each with a healthcheck is healthy and each
// one-shot has exited 0. Again after a kill, it starts what is stopped.
// COMPOSE_BUILD=0 in the environment uses the images already built: a
// cold build of the broker's image takes tens of minutes on a small
// machine.
func (e *composeEngine) up(t *testing.T, f composeFile) {
	t.Helper()
	build := os.Getenv("COMPOSE_BUILD") != "0"
	if e.engine == "docker" {
		args := []string{"up", "-d", "--wait", "--wait-timeout", "600"}
		if build {
			args = append(args, "--build")
		}
		e.run(t, 90*time.Minute, args...)
		return
	}
	if build && !e.built {
		e.run(t, 90*time.Minute, "build")
		e.built = true
	}
	order := f.startOrder(t, e.profiles)
	for _, name := range order {
		for dep, c := range f.Services[name].DependsOn {
			e.waitCondition(t, dep, c.Condition)
		}
		e.run(t, 5*time.Minute, "up", "-d", "--no-deps", name)
	}
	for _, name := range order {
		switch s := f.Services[name]; {
		case s.Healthcheck != nil:
			e.waitCondition(t, name, "service_healthy")
		case s.Restart == "no":
			e.waitCondition(t, name, "service_completed_successfully")
		}
	}
}

// waitCondition waits, on podman, until service meets a depends_on
// condition: healthy, exited 0, or started.
func (e *composeEngine) waitCondition(t *testing.T, service, condition string) {
	t.Helper()
	name := e.container(t, service)
	switch condition {
	case "service_healthy":
		e.waitHealthy(t, name)
	case "service_completed_successfully":
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "podman", "wait", name).CombinedOutput()
		if code := strings.TrimSpace(string(out)); err != nil || code != "0" {
			t.Fatalf("%s exited with %q (%v): want 0\n%s", service, code, err, e.logs(service))
		}
	case "service_started", "":
	default:
		t.Fatalf("%s: depends_on condition %q is not one compose has", service, condition)
	}
}

// waitHealthy runs container's healthcheck until it passes, for at most
// five minutes; a container that stops running fails t at once.
func (e *composeEngine) waitHealthy(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		out, err := exec.CommandContext(ctx, "podman", "healthcheck", "run", name).CombinedOutput()
		if err == nil {
			return
		}
		state, _ := exec.Command("podman", "inspect", "-f", "{{.State.Status}}", name).Output()
		if s := strings.TrimSpace(string(state)); s != "running" {
			t.Fatalf("%s is %s before its healthcheck passed:\n%s", name, s, e.containerLogs(name))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: healthcheck not passing after 5m (last: %v %s)\n%s", name, err, out, e.containerLogs(name))
		case <-tick.C:
		}
	}
}

// container returns the name of service's container, on podman.
func (e *composeEngine) container(t *testing.T, service string) string {
	t.Helper()
	out, err := exec.Command("podman", "ps", "-a", "--format", "{{.Names}}",
		"--filter", "label=io.podman.compose.project="+composeProject,
		"--filter", "label=com.docker.compose.service="+service).Output()
	names := strings.Fields(string(out))
	if err != nil || len(names) != 1 {
		t.Fatalf("the container of %s: %v %q", service, err, names)
	}
	return names[0]
}

// logs returns what service logged, for failure messages.
func (e *composeEngine) logs(service string) string {
	out, err := e.exec(time.Minute, "logs", service)
	if err != nil {
		return fmt.Sprintf("(logs of %s: %v) %s", service, err, out)
	}
	return strings.TrimSpace(out)
}

func (e *composeEngine) containerLogs(name string) string {
	out, _ := exec.Command(e.engine, "logs", "--tail", "100", name).CombinedOutput()
	return strings.TrimSpace(string(out))
}

// down removes the project's containers, networks and volumes.
func (e *composeEngine) down(t *testing.T) {
	t.Helper()
	if out, err := e.exec(5*time.Minute, "down", "-v"); err != nil {
		t.Errorf("compose down -v: %v\n%s", err, out)
	}
}

// startOrder returns the services of the active profiles (and those in
// no profile) so that each comes after what it depends on; ties in name
// order.
func (f composeFile) startOrder(t *testing.T, profiles []string) []string {
	t.Helper()
	active := map[string]bool{}
	for name, s := range f.Services {
		active[name] = len(s.Profiles) == 0 || slices.ContainsFunc(s.Profiles, func(p string) bool { return slices.Contains(profiles, p) })
	}
	var order []string
	placed := map[string]bool{}
	for len(order) < countTrue(active) {
		var ready []string
		for name, on := range active {
			if !on || placed[name] {
				continue
			}
			ok := true
			for dep := range f.Services[name].DependsOn {
				if !active[dep] {
					t.Fatalf("%s depends on %s, which is not in the profiles %v", name, dep, profiles)
				}
				ok = ok && placed[dep]
			}
			if ok {
				ready = append(ready, name)
			}
		}
		if len(ready) == 0 {
			t.Fatalf("docker-compose.yml: a dependency cycle among %v", active)
		}
		slices.Sort(ready)
		for _, name := range ready {
			placed[name] = true
		}
		order = append(order, ready...)
	}
	return order
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}
