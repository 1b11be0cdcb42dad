%% The program every node of a conformance/dist recording runs (docs/conformance-dist.md).
%%
%% record.py compiles it with erlc into a temporary folder and starts each node with
%% `-eval 'lic_dist_node:start()'`. The node then reads commands from its standard input, one
%% Erlang term a line (ending in a full stop), and writes what happens to its standard output, one
%% line `LIC {json}` each, stamped with os:system_time(microsecond) (CLOCK_REALTIME: the clock
%% record.py stamps the cuts with, shared by every node of the host). The logger writes to
%% standard error, so standard output carries only these lines. End of input halts the node, so a
%% node never outlives the recorder's pipe.
%%
%% Commands:
%%   {names, [{Node, Short}]}        the short name (a binary) of every node of the run
%%   {connect, [Node]}               net_kernel:connect_node/1 to each
%%   {wait_mesh, [Node], Ms}         until nodes() holds them all, then global:sync()
%%   {procs, [{Name, proc|server}]}  start and register the case's processes of this node
%%   {resolve, [{Name, Node}]}       learn the pid of every process of the case (rpc for remote ones)
%%   {schedule, T0Us, [{I, AtMs, Step}]}  run each step at T0Us + AtMs * 1000 (system time, us)
%%   {finish, [GlobalName]}          report global:whereis_name/1 of each name, then `done`
%%   halt
%% Steps: {link, P, To}, {monitor, P, To}, {send, P, To, ToNode, Every, Count},
%%        {call, P, To, ToNode, Timeout}, {register_global, Name, P}.
-module(lic_dist_node).
-behaviour(gen_server).
-export([start/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

start() ->
    Boot = self(),
    Pid = spawn(fun() -> ctl_init(Boot) end),
    receive {Pid, started} -> ok end.

%% ---------------------------------------------------------------------------------------------
%% output

now_us() -> os:system_time(microsecond).

emit(Fields) -> emit(now_us(), Fields).

emit(T, Fields) ->
    io:put_chars(user, ["LIC ", json([{t_us, T} | Fields]), "\n"]).

json(Fields) ->
    ["{", lists:join(",", [[json_str(K), ":", json_val(V)] || {K, V} <- Fields]), "}"].

json_val(V) when is_integer(V) -> integer_to_list(V);
json_val(V) when is_float(V) -> float_to_list(V, [{decimals, 3}]);
json_val(true) -> "true";
json_val(false) -> "false";
json_val(V) when is_atom(V) -> json_str(V);
json_val(V) when is_binary(V) -> json_str(V);
json_val(V) when is_list(V) -> ["[", lists:join(",", [json_val(X) || X <- V]), "]"].

json_str(A) when is_atom(A) -> json_str(atom_to_binary(A, utf8));
json_str(S) when is_list(S) -> json_str(unicode:characters_to_binary(S));
json_str(B) when is_binary(B) ->
    [$", [esc(C) || <<C>> <= B], $"].

esc($") -> "\\\"";
esc($\\) -> "\\\\";
esc(C) when C < 32 -> io_lib:format("\\u~4.16.0b", [C]);
esc(C) -> C.

text(Term) -> iolist_to_binary(io_lib:format("~0p", [Term])).

%% The main atom of a reason: the atom itself, or a tuple's first element.
main_atom(R) when is_atom(R) -> R;
main_atom(R) when is_tuple(R), tuple_size(R) > 0, is_atom(element(1, R)) -> element(1, R);
main_atom(_) -> other.

reason_fields(R) when is_atom(R) -> [{reason, R}];
reason_fields(R) -> [{reason, main_atom(R)}, {raw, text(R)}].

short(Node) ->
    case ets:lookup(lic_nodes, Node) of
        [{_, S}] -> S;
        [] -> atom_to_binary(Node, utf8)
    end.

me() -> short(node()).

name_of(Pid) when is_pid(Pid) ->
    case ets:lookup(lic_names, Pid) of
        [{_, Name}] -> Name;
        [] -> text(Pid)
    end;
name_of({Name, _Node}) when is_atom(Name) -> Name;
name_of(Name) when is_atom(Name) -> Name;
name_of(Other) -> text(Other).

pid_of(Name) ->
    [{_, Pid}] = ets:lookup(lic_pids, Name),
    Pid.

%% ---------------------------------------------------------------------------------------------
%% the controller: commands from standard input

ctl_init(Boot) ->
    register(lic_ctl, self()),
    ets:new(lic_nodes, [named_table, public, {read_concurrency, true}]),
    ets:new(lic_names, [named_table, public, {read_concurrency, true}]),
    ets:new(lic_pids, [named_table, public, {read_concurrency, true}]),
    Self = self(),
    Watcher = spawn_link(fun() -> watcher_init(Self) end),
    receive {Watcher, watching} -> ok end,
    spawn_link(fun() -> reader(Self) end),
    Boot ! {self(), started},
    emit([{ev, ready}, {node, node()}, {otp_release, list_to_binary(erlang:system_info(otp_release))},
          {otp_version, otp_version()}, {erts, list_to_binary(erlang:system_info(version))}]),
    ctl_loop(#{watcher => Watcher}).

%% The full OTP version (25.2.3), from the release's OTP_VERSION file.
otp_version() ->
    Rel = erlang:system_info(otp_release),
    case file:read_file(filename:join([code:root_dir(), "releases", Rel, "OTP_VERSION"])) of
        {ok, Text} -> string:trim(Text);
        _ -> list_to_binary(Rel)
    end.

reader(Ctl) ->
    case io:get_line(user, "") of
        eof -> erlang:halt(0);
        {error, _} -> erlang:halt(0);
        Line ->
            case parse(Line) of
                {ok, Term} -> Ctl ! {cmd, Term};
                {error, Why} -> emit([{ev, error}, {what, bad_command}, {raw, text({Why, Line})}])
            end,
            reader(Ctl)
    end.

parse(Line) ->
    case erl_scan:string(unicode:characters_to_list(Line)) of
        {ok, Tokens, _} -> erl_parse:parse_term(Tokens);
        Error -> {error, Error}
    end.

ctl_loop(State) ->
    receive
        {cmd, Cmd} ->
            ctl_loop(command(Cmd, State));
        {fire, I, AtUs, Step} ->
            T = now_us(),
            emit(T, [{ev, step}, {i, I}, {late_us, T - AtUs}]),
            do_step(Step, AtUs),
            ctl_loop(State);
        _Other ->
            ctl_loop(State)
    end.

reply(Cmd, Fields) -> emit([{ev, reply}, {cmd, Cmd} | Fields]).

command({names, Pairs}, State) ->
    [ets:insert(lic_nodes, {Node, Short}) || {Node, Short} <- Pairs],
    reply(names, [{ok, true}]),
    State;
command({connect, Nodes}, State) ->
    Results = [net_kernel:connect_node(N) || N <- Nodes],
    reply(connect, [{ok, lists:all(fun(R) -> R =:= true end, Results)}, {raw, text(Results)}]),
    State;
command({wait_mesh, Nodes, Ms}, State) ->
    Deadline = erlang:monotonic_time(millisecond) + Ms,
    Ok = wait_mesh(Nodes, Deadline),
    Synced = Ok andalso (global:sync() =:= ok),
    reply(wait_mesh, [{ok, Synced}, {raw, text(nodes())}]),
    State;
command({procs, Procs}, State = #{watcher := Watcher}) ->
    [start_proc(Name, Kind, Watcher) || {Name, Kind} <- Procs],
    reply(procs, [{ok, true}]),
    State;
command({resolve, Procs}, State) ->
    Missing = [Name || {Name, Node} <- Procs, resolve(Name, Node) =:= error],
    reply(resolve, [{ok, Missing =:= []}, {raw, text(Missing)}]),
    State;
command({schedule, T0Us, Steps}, State) ->
    Now = now_us(),
    [erlang:send_after(ceil_ms(T0Us + At * 1000 - Now), self(),
                       {fire, I, T0Us + At * 1000, Step})
     || {I, At, Step} <- Steps],
    reply(schedule, [{ok, true}, {lead_us, T0Us - Now}]),
    State;
command({finish, Names}, State) ->
    [emit([{ev, global}, {node, me()}, {name, N}, {owner, owner(global:whereis_name(N))}])
     || N <- Names],
    reply(finish, [{ok, true}]),
    State;
command(halt, _State) ->
    erlang:halt(0);
command(Other, State) ->
    emit([{ev, error}, {what, unknown_command}, {raw, text(Other)}]),
    State.

%% Microseconds to a timer's milliseconds, rounded up (a timer never fires early).
ceil_ms(Us) when Us =< 0 -> 0;
ceil_ms(Us) -> (Us + 999) div 1000.

owner(undefined) -> undefined;
owner(Pid) -> name_of(Pid).

wait_mesh(Nodes, Deadline) ->
    case Nodes -- nodes() of
        [] -> true;
        _ ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> false;
                false -> timer:sleep(20), wait_mesh(Nodes, Deadline)
            end
    end.

resolve(Name, Node) when Node =:= node() ->
    case whereis(Name) of
        undefined -> error;
        Pid -> remember(Name, Pid)
    end;
resolve(Name, Node) ->
    case rpc:call(Node, erlang, whereis, [Name], 5000) of
        Pid when is_pid(Pid) -> remember(Name, Pid);
        _ -> error
    end.

remember(Name, Pid) ->
    ets:insert(lic_names, {Pid, Name}),
    ets:insert(lic_pids, {Name, Pid}),
    ok.

start_proc(Name, proc, Watcher) ->
    Pid = spawn(fun() -> proc_init(Name) end),
    watched(Name, Pid, Watcher);
start_proc(Name, server, Watcher) ->
    {ok, Pid} = gen_server:start({local, Name}, ?MODULE, Name, []),
    watched(Name, Pid, Watcher).

watched(Name, Pid, Watcher) ->
    wait_registered(Name),
    remember(Name, Pid),
    Watcher ! {watch, Pid, self()},
    receive {Watcher, watched} -> ok end.

wait_registered(Name) ->
    case whereis(Name) of
        undefined -> timer:sleep(1), wait_registered(Name);
        _ -> ok
    end.

%% ---------------------------------------------------------------------------------------------
%% the steps, run on the node of the process that acts

do_step({link, P, To}, _) ->
    pid_of(P) ! {lic_do, {link, pid_of(To)}};
do_step({monitor, P, To}, _) ->
    pid_of(P) ! {lic_do, {monitor, pid_of(To)}};
do_step({send, P, To, ToNode, Every, Count}, AtUs) ->
    spawn(fun() -> sender(P, {To, ToNode}, Every, Count, AtUs, 1) end);
do_step({call, P, To, ToNode, Timeout}, _) ->
    spawn(fun() -> caller(P, To, ToNode, Timeout) end);
do_step({register_global, Name, P}, _) ->
    spawn(fun() -> register_global(Name, P) end).

%% {seq, From, N} for N = 1..Count, the N-th at AtUs + (N - 1) * Every ms (absolute, no drift).
sender(_P, _Dest, _Every, Count, _AtUs, N) when N > Count -> ok;
sender(P, Dest, Every, Count, AtUs, N) ->
    Due = AtUs + (N - 1) * Every * 1000,
    Wait = ceil_ms(Due - now_us()),
    if Wait > 0 -> receive after Wait -> ok end;
       true -> ok
    end,
    T1 = now_us(),
    erlang:send(Dest, {seq, P, N}),
    T2 = now_us(),
    if T2 - T1 >= 2000 ->
           emit(T2, [{ev, send_blocked}, {p, P}, {to, element(1, Dest)}, {seq, N},
                     {elapsed_us, T2 - T1}]);
       true -> ok
    end,
    sender(P, Dest, Every, Count, AtUs, N + 1).

caller(P, To, ToNode, Timeout) ->
    T1 = now_us(),
    R = (catch gen_server:call({To, ToNode}, ping, Timeout)),
    T2 = now_us(),
    %% gen_server:call exits with {Reason, {gen_server, call, Args}}: Reason is the result
    %% (its main atom, and the whole term as raw when it is not an atom).
    Fields = case R of
                 pong -> [{result, pong}];
                 {'EXIT', {Reason, {gen_server, call, _}}} -> result_fields(Reason);
                 {'EXIT', Reason} -> result_fields(Reason);
                 Other -> [{result, other}, {raw, text(Other)}]
             end,
    emit(T2, [{ev, call}, {p, P}, {to, To}, {elapsed_us, T2 - T1} | Fields]).

result_fields(R) when is_atom(R) -> [{result, R}];
result_fields(R) -> [{result, main_atom(R)}, {raw, text(R)}].

register_global(Name, P) ->
    T1 = now_us(),
    R = global:register_name(Name, pid_of(P)),
    T2 = now_us(),
    emit(T2, [{ev, global_register}, {node, me()}, {p, P}, {name, Name}, {result, R},
              {elapsed_us, T2 - T1}]).

%% ---------------------------------------------------------------------------------------------
%% the case's processes: a plain one and a gen_server, both trapping exits and reporting

proc_init(Name) ->
    process_flag(trap_exit, true),
    register(Name, self()),
    proc_loop(Name).

proc_loop(Name) ->
    receive Msg -> handle(Name, Msg) end,
    proc_loop(Name).

handle(Name, {'EXIT', From, Reason}) ->
    emit([{ev, exit}, {p, Name}, {from, name_of(From)} | reason_fields(Reason)]);
handle(Name, {'DOWN', _Ref, process, Obj, Reason}) ->
    emit([{ev, down}, {p, Name}, {'of', name_of(Obj)} | reason_fields(Reason)]);
handle(Name, {seq, From, N}) ->
    emit([{ev, recv}, {p, Name}, {from, From}, {seq, N}]);
handle(_Name, {lic_do, {link, Pid}}) ->
    link(Pid);
handle(_Name, {lic_do, {monitor, Pid}}) ->
    erlang:monitor(process, Pid);
handle(Name, Other) ->
    emit([{ev, other_msg}, {p, Name}, {raw, text(Other)}]).

init(Name) ->
    process_flag(trap_exit, true),
    {ok, Name}.

handle_call(ping, _From, Name) -> {reply, pong, Name};
handle_call(_Other, _From, Name) -> {reply, unknown, Name}.

handle_cast(_Msg, Name) -> {noreply, Name}.

handle_info(Msg, Name) ->
    handle(Name, Msg),
    {noreply, Name}.

%% ---------------------------------------------------------------------------------------------
%% the watcher: node events, and the end of any process of the case on this node

watcher_init(Ctl) ->
    ok = net_kernel:monitor_nodes(true, [nodedown_reason]),
    Ctl ! {self(), watching},
    watcher_loop().

watcher_loop() ->
    receive
        {nodeup, Node, _Info} ->
            emit([{ev, nodeup}, {node, me()}, {peer, short(Node)}]);
        {nodedown, Node, Info} ->
            Reason = proplists:get_value(nodedown_reason, Info, unknown),
            emit([{ev, nodedown}, {node, me()}, {peer, short(Node)} | reason_fields(Reason)]);
        {watch, Pid, From} ->
            erlang:monitor(process, Pid),
            From ! {self(), watched};
        {'DOWN', _Ref, process, Pid, Reason} ->
            emit([{ev, proc_down}, {node, me()}, {p, name_of(Pid)} | reason_fields(Reason)]);
        _ ->
            ok
    end,
    watcher_loop().
