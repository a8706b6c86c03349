package app

// serveNice is the scheduling priority `parley serve` runs at, as a Unix
// nice value: below the programs a person is using, the browser that
// shows Parley's page first among them. The server's bursts (reading a
// model's reply as fast as it comes, rendering it, highlighting code)
// otherwise take a core from the page just as it draws, on a machine with
// few: with 1 MiB of reply streamed on two cores, the page's main thread
// waited for a core through half of the tasks that took it over 50 ms,
// whose own work took 11-36 ms (make bench's text case, traced). On an idle
// machine the server gets all the processor it did before; what it starts
// (tools, commands) inherits the priority. The desktop app keeps its
// priority: its window is drawn by the process itself and the web view it
// starts.
const serveNice = 10
